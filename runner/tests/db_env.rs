//! The database environment: preflight lines for databases that cannot host a run, session
//! settings that role/database timeouts cannot break, `schema install|status|uninstall`, and
//! the cluster-wide leftover sweep.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use support::{dsn, liveness_lock, main_with, run, scalar, sql, suffix, text, Gate, Held, Scratch};

use awa_conformance_runner::pg::conninfo::parse_text;

/// `dsn` with some settings replaced, as a key=value string.
fn dsn_with(dsn: &str, changes: &[(&str, &str)]) -> String {
    let mut pairs = parse_text(dsn).unwrap();
    for (k, v) in changes {
        pairs.retain(|(key, _)| key != k);
        pairs.push(((*k).to_owned(), (*v).to_owned()));
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A role of the cluster, dropped (with what it owns) on drop.
struct Role {
    dsn: String,
    name: String,
}

impl Role {
    fn new(dsn: &str, label: &str, attributes: &str) -> Self {
        let name = format!("awa_t_{label}_{}", suffix());
        sql(
            dsn,
            &format!("CREATE ROLE \"{name}\" LOGIN PASSWORD 'pw-{name}' {attributes}"),
        );
        Self {
            dsn: dsn.to_owned(),
            name,
        }
    }

    fn dsn(&self) -> String {
        dsn_with(
            &self.dsn,
            &[
                ("user", &self.name),
                ("password", &format!("pw-{}", self.name)),
            ],
        )
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        // The tests grant it privileges in the main database only.
        sql(
            &self.dsn,
            &format!(
                "DROP OWNED BY \"{r}\"; DROP ROLE IF EXISTS \"{r}\"",
                r = self.name
            ),
        );
    }
}

/// A database of the cluster, dropped on drop.
struct Database {
    dsn: String,
    name: String,
}

impl Database {
    fn new(dsn: &str, label: &str) -> Self {
        let name = format!("awa_t_{label}_{}", suffix());
        sql(dsn, &format!("CREATE DATABASE \"{name}\""));
        Self {
            dsn: dsn.to_owned(),
            name,
        }
    }

    /// A database owned by `owner`, as an application's database usually is.
    fn owned_by(dsn: &str, label: &str, owner: &Role) -> Self {
        let name = format!("awa_t_{label}_{}", suffix());
        sql(
            dsn,
            &format!("CREATE DATABASE \"{name}\" OWNER \"{}\"", owner.name),
        );
        Self {
            dsn: dsn.to_owned(),
            name,
        }
    }

    fn dsn(&self) -> String {
        dsn_with(&self.dsn, &[("dbname", &self.name)])
    }
}

/// Roles a test's install may create, dropped (if still there) on drop, after the databases
/// declared later are gone.
struct Leftover {
    dsn: String,
    roles: Vec<String>,
}

impl Leftover {
    /// The default producer role and function owner (`awa_producer`, `awa_owner`), to drop after
    /// the test when they do not exist before it: a test that installs under the default names
    /// leaves the cluster's roles as it found them. Declare it before the databases.
    fn default_roles(dsn: &str) -> Self {
        let roles = ["awa_producer", "awa_owner"]
            .into_iter()
            .filter(|r| {
                scalar(
                    dsn,
                    &format!("SELECT count(*) FROM pg_roles WHERE rolname = '{r}'"),
                ) == "0"
            })
            .map(str::to_owned)
            .collect();
        Self {
            dsn: dsn.to_owned(),
            roles,
        }
    }
}

impl Drop for Leftover {
    fn drop(&mut self) {
        for r in &self.roles {
            sql(&self.dsn, &format!("DROP ROLE IF EXISTS \"{r}\""));
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        sql(
            &self.dsn,
            &format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name),
        );
    }
}

/// The one `error:` line of a failed run (asserting there is exactly one).
fn error_line(out: &std::process::Output) -> String {
    let stderr = text(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(lines.len(), 1, "expected one error line:\n{stderr}");
    lines[0].to_owned()
}

fn read_only_database_is_one_line_exit_4() {
    let dsn = dsn();
    let _leftover = Leftover::default_roles(&dsn);
    let db = Database::new(&dsn, "ro");
    // Install first (writable), then make the database read-only for new sessions.
    let out = run(
        &["schema", "install", "--dsn", &db.dsn(), "--schema", "awa"],
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    sql(
        &dsn,
        &format!(
            "ALTER DATABASE \"{}\" SET default_transaction_read_only = on",
            db.name
        ),
    );
    let out = run(&["--dsn", &db.dsn(), "-q", "sql::"], &[], 120);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(line.contains("is read-only"), "{line}");
    assert!(line.contains("default_transaction_read_only"), "{line}");
    // `schema status` changes nothing, so it answers on a read-only database too: the
    // reference installed identically (exit 0), and nothing of its comparison stays.
    let schemas = || sql(&db.dsn(), "SELECT nspname FROM pg_namespace ORDER BY 1");
    let before = schemas();
    let out = run(
        &["schema", "status", "--dsn", &db.dsn(), "--schema", "awa"],
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(before, schemas());
}

fn missing_privileges_are_named_exit_4() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "lowpriv");
    // Can read the schema, nothing else: no DELETE, no EXECUTE on insert_job, no CREATEROLE.
    let role = Role::new(&s.dsn, "lowpriv", "");
    s.sql(&format!(
        "GRANT USAGE ON SCHEMA @S@ TO \"{r}\"; GRANT SELECT ON @S@.queue_meta TO \"{r}\"",
        r = role.name
    ));
    let out = run(
        &[s.args_for(&role.dsn()), vec!["-q", "sql::"]].concat(),
        &[],
        120,
    );
    s.sql(&format!(
        "REVOKE ALL ON @S@.queue_meta FROM \"{r}\"; REVOKE ALL ON SCHEMA @S@ FROM \"{r}\"",
        r = role.name
    ));
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    for needed in [
        "EXECUTE on function",
        "insert_job(",
        "DELETE on table",
        "contract_jobs",
        "INSERT on table",
        "CREATEROLE",
    ] {
        assert!(line.contains(needed), "{needed} not named: {line}");
    }
    assert!(!line.contains("USAGE on schema"), "{line}");
    assert!(!line.contains(&format!("pw-{}", role.name)), "{line}");
}

/// A non-superuser runner with every privilege, for limits that spare superusers.
fn capable_runner(s: &Scratch, label: &str, attributes: &str) -> Role {
    let role = Role::new(&s.dsn, label, &format!("CREATEROLE {attributes}"));
    s.sql(&format!(
        "GRANT USAGE ON SCHEMA @S@ TO \"{r}\"; \
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA @S@ TO \"{r}\"; \
         GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA @S@ TO \"{r}\"; \
         GRANT @P@ TO \"{r}\" WITH ADMIN OPTION",
        r = role.name
    ));
    role
}

fn too_few_connections_is_one_line_exit_4() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "connlimit");
    let role = capable_runner(&s, "connlimit", "CONNECTION LIMIT 5");
    let out = run(
        &[
            s.args_for(&role.dsn()),
            vec!["--test-threads", "2", "-q", "sql::"],
        ]
        .concat(),
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(line.contains("too few connections"), "{line}");
    let need = awa_conformance_runner::contract::environment::connections_needed(2, false);
    assert!(line.contains(&format!("needs up to {need} ")), "{line}");
    assert!(line.contains("CONNECTION LIMIT 5"), "{line}");
    assert!(!line.contains("server is running"), "{line}");
    // A producer's sessions count too (the producer is never started: preflight refuses).
    let out = run(
        &[
            s.args_for(&role.dsn()),
            vec![
                "--test-threads",
                "2",
                "--producer",
                "exit 3",
                "-q",
                "producer::",
            ],
        ]
        .concat(),
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    let need = awa_conformance_runner::contract::environment::connections_needed(2, true);
    assert!(
        line.contains(&format!("and a producer needs up to {need} ")),
        "{line}"
    );
    // The refused login itself (limit reached) says so, not "is the server running".
    sql(
        &s.dsn,
        &format!("ALTER ROLE \"{}\" CONNECTION LIMIT 0", role.name),
    );
    let out = run(
        &[s.args_for(&role.dsn()), vec!["-q", "sql::"]].concat(),
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(line.contains("no free connection slot"), "{line}");
    assert!(!line.contains("server is running"), "{line}");
}

/// ADR 0057: a producer declaring more requests in flight than the runner's role has free
/// connection slots for (here `CONNECTION LIMIT 15`, which the preflight of a producer run with
/// 2 test threads accepts) is given fewer lanes, the provenance says how many and why, and the
/// run still checks every case. Before that, the same role outside the owner of job_routing is
/// refused at preflight (exit 4, one line naming the GRANT): it would read every stored job as
/// missing and blame the producer.
fn lanes_fit_the_free_connection_slots() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "lanes");
    let role = capable_runner(&s, "lanes", "CONNECTION LIMIT 15");
    // The runner reads a producer's jobs back through job_routing: a member of its owner.
    let owner = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_userbyid(proowner) FROM pg_proc WHERE proname = 'job_routing' \
             AND pronamespace = '{}'::regnamespace",
            s.schema
        ),
    );
    let out = run(
        &[
            s.args_for(&role.dsn()),
            vec!["--producer", "exit 3", "-q", "producer::"],
        ]
        .concat(),
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(
        line.contains(&format!("is not a member of \"{owner}\"")),
        "{line}"
    );
    sql(&s.dsn, &format!("GRANT \"{owner}\" TO \"{}\"", role.name));
    let cmd = support::test_producer("AWA_TEST_PRODUCER_IN_FLIGHT=8");
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = run(
        &[
            s.args_for(&role.dsn()),
            vec![
                "--test-threads",
                "2",
                "--producer",
                &cmd,
                "--report-json",
                report.to_str().unwrap(),
                "-q",
                "producer::routing_precedence::",
            ],
        ]
        .concat(),
        &[],
        300,
    );
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{:?}",
        text(&out.stderr),
        report["cases"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["status"] == "failed"))
            .map(|c| &c["message"])
    );
    let lanes = report["provenance"]["extra"]["producer_in_flight"]
        .as_str()
        .unwrap()
        .to_owned();
    let used: usize = lanes.split(' ').next().unwrap().parse().unwrap();
    assert!(
        (1..8).contains(&used) && lanes.contains("of max_in_flight 8 (the server has"),
        "{lanes}"
    );
}

fn role_and_database_timeouts_cannot_break_a_run() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "tmo");
    let role = capable_runner(&s, "tmo", "");
    sql(
        &s.dsn,
        &format!(
            "ALTER ROLE \"{r}\" SET statement_timeout = '1ms'; \
             ALTER ROLE \"{r}\" SET lock_timeout = '1ms'; \
             ALTER ROLE \"{r}\" SET idle_in_transaction_session_timeout = '1ms'; \
             ALTER ROLE \"{r}\" SET idle_session_timeout = '1ms'",
            r = role.name
        ),
    );
    let out = run(
        &[s.args_for(&role.dsn()), vec!["-q", "sql::"]].concat(),
        &[],
        300,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stderr),
        text(&out.stdout)
    );
}

/// Each case's name and status in a run's JSON report, sorted.
fn statuses(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What [`run_report`] saw: the exit code, each case's status, stderr, the JSON report.
type Ran = (
    Option<i32>,
    Vec<(String, String)>,
    String,
    serde_json::Value,
);

/// A run of `args` against `db_dsn`, schema `awa`, with a JSON report.
fn run_report(db_dsn: &str, args: &[&str]) -> Ran {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let mut all = vec![
        "--dsn",
        db_dsn,
        "--schema",
        "awa",
        "-q",
        "--report-json",
        report.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = run(&all, &[], 600);
    let stderr = text(&out.stderr);
    let report: serde_json::Value = std::fs::read_to_string(&report)
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap_or(serde_json::Value::Null);
    let got = if report.is_null() {
        Vec::new()
    } else {
        statuses(&report)
    };
    (out.status.code(), got, stderr, report)
}

/// Settings a database may carry (`ALTER DATABASE ... SET`), each legal and not the default,
/// that changed verdicts or broke runs before the runner's sessions pinned them (ADR 0060).
const DATABASE_SETTINGS: [(&str, &str); 10] = [
    ("quote_all_identifiers", "on"),
    ("default_transaction_isolation", "serializable"),
    ("standard_conforming_strings", "off"),
    ("DateStyle", "'SQL, DMY'"),
    ("IntervalStyle", "sql_standard"),
    ("TimeZone", "'Asia/Kolkata'"),
    ("extra_float_digits", "-3"),
    ("bytea_output", "escape"),
    ("transform_null_equals", "on"),
    ("array_nulls", "off"),
];

/// Settings of the runner's own role in that database (`ALTER ROLE ... IN DATABASE`): they
/// would end or break the runner's sessions, not a producer's.
const ROLE_SETTINGS: [(&str, &str); 2] = [("exit_on_error", "on"), ("row_security", "off")];

/// ADR 0060: under every setting above the full run and a producer run give exactly the
/// verdicts they give on a default database, and the reference functions, called from a
/// session that keeps the database's settings (standard_conforming_strings off among them),
/// return the vectors' digests and shards.
fn legal_server_settings_keep_every_verdict() {
    let dsn = dsn();
    let _leftover = Leftover::default_roles(&dsn);
    let plain = Database::new(&dsn, "plain");
    let odd = Database::new(&dsn, "settings");
    for db in [&plain, &odd] {
        let out = run(
            &["schema", "install", "--dsn", &db.dsn(), "--schema", "awa"],
            &[],
            120,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    for (name, value) in DATABASE_SETTINGS {
        sql(
            &dsn,
            &format!("ALTER DATABASE \"{}\" SET {name} = {value}", odd.name),
        );
    }
    for (name, value) in ROLE_SETTINGS {
        sql(
            &dsn,
            &format!(
                "ALTER ROLE CURRENT_USER IN DATABASE \"{}\" SET {name} = {value}",
                odd.name
            ),
        );
    }
    // The reference schema does not depend on the caller's session: digests and long-key
    // ordering shards (the padding path) under the database's settings equal the vectors.
    let vectors = |file: &str| -> Vec<serde_json::Value> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vectors/v1")
            .join(file);
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        doc["vectors"].as_array().unwrap().clone()
    };
    assert_eq!(
        sql(&odd.dsn(), "SHOW standard_conforming_strings"),
        vec![vec![Some("off".to_owned())]]
    );
    for v in vectors("concurrency_digest.json") {
        let (key, want) = (
            v["input"]["key_hex"].as_str().unwrap(),
            v["expected"]["digest_hex"].as_str().unwrap(),
        );
        let got = scalar(
            &odd.dsn(),
            &format!("SELECT encode(awa.concurrency_digest(decode('{key}', 'hex')), 'hex')"),
        );
        assert_eq!(got, want, "{}", v["id"]);
    }
    for v in vectors("ordering_shard.json") {
        let key = v["input"]["key_hex"].as_str().unwrap();
        let want = v["expected"]["shards"][63].to_string();
        let got = scalar(
            &odd.dsn(),
            &format!("SELECT awa.ordering_shard(decode('{key}', 'hex'), 64)"),
        );
        assert_eq!(got, want, "{}", v["id"]);
    }
    // The whole run, and a producer run with requests in flight, as on the default database.
    let producer = support::test_producer("AWA_TEST_PRODUCER_IN_FLIGHT=4");
    for args in [
        vec!["sql::"],
        vec![
            "--producer",
            producer.as_str(),
            "producer::routing_precedence::",
        ],
        vec!["--producer", producer.as_str(), "producer::payload::"],
    ] {
        let (code, want, stderr, _) = run_report(&plain.dsn(), &args);
        assert_eq!(code, Some(0), "{args:?} on a default database: {stderr}");
        assert!(want.len() > 10, "{args:?}: {want:?}");
        let (code, got, stderr, _) = run_report(&odd.dsn(), &args);
        let differ: Vec<_> = want
            .iter()
            .zip(&got)
            .filter(|(w, g)| w != g)
            .take(5)
            .collect();
        assert!(
            code == Some(0) && got.len() == want.len() && differ.is_empty(),
            "{args:?} under the settings: exit {code:?}, {} cases (want {}), first \
             differences {differ:?}\n{stderr}",
            got.len(),
            want.len()
        );
    }
}

/// ADR 0060: a database whose encoding is not UTF8 gets one line naming the encoding (exit 4)
/// from a run, a producer run and fuzz, and nothing is left behind. Its reference schema still
/// installs (the kit's SQL is ASCII).
fn non_utf8_databases_are_one_line_exit_4() {
    let dsn = dsn();
    let _leftover = Leftover::default_roles(&dsn);
    let logins = || {
        sql(
            &dsn,
            "SELECT rolname FROM pg_roles WHERE rolname LIKE 'awa\\_conformance\\_%' ORDER BY 1",
        )
    };
    let before = logins();
    let producer = support::test_producer("");
    for encoding in ["KOI8R", "LATIN1", "SQL_ASCII"] {
        let name = format!("awa_t_enc_{}", suffix());
        sql(
            &dsn,
            &format!(
                "CREATE DATABASE \"{name}\" ENCODING '{encoding}' LC_COLLATE 'C' LC_CTYPE 'C' \
                 TEMPLATE template0"
            ),
        );
        let db = Database {
            dsn: dsn.clone(),
            name,
        };
        let out = run(
            &["schema", "install", "--dsn", &db.dsn(), "--schema", "awa"],
            &[],
            120,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{encoding}: {}",
            text(&out.stderr)
        );
        for args in [
            vec!["--dsn", &db.dsn(), "--schema", "awa", "-q", "sql::"],
            vec![
                "--dsn",
                &db.dsn(),
                "--schema",
                "awa",
                "-q",
                "--producer",
                &producer,
                "producer::",
            ],
            vec![
                "fuzz",
                "--dsn",
                &db.dsn(),
                "--schema",
                "awa",
                "--seed",
                "1",
                "--cases",
                "5",
            ],
        ] {
            let out = run(&args, &[], 120);
            assert_eq!(
                out.status.code(),
                Some(4),
                "{encoding} {args:?}: {}",
                text(&out.stderr)
            );
            let line = error_line(&out);
            assert!(
                line.contains(&format!("server encoding {encoding}")) && line.contains("UTF8"),
                "{line}"
            );
        }
    }
    assert_eq!(before, logins(), "a run's login role was left behind");
}

/// A database's CONNECTION LIMIT counts every session of a run, a superuser runner's too: the
/// run's other logins (the least-privilege suite's, the producer's) are never exempt from it.
/// A superuser runner and a producer declaring 8 in flight get lanes that fit, and every case
/// passes (before, hundreds failed on "too many connections" as the producer's fault).
fn a_database_connection_limit_binds_a_superuser_runs_logins() {
    let dsn = dsn();
    let _leftover = Leftover::default_roles(&dsn);
    assert_eq!(
        scalar(
            &dsn,
            "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user"
        ),
        "true"
    );
    let db = Database::new(&dsn, "connlimit");
    let out = run(
        &["schema", "install", "--dsn", &db.dsn(), "--schema", "awa"],
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    sql(
        &dsn,
        &format!("ALTER DATABASE \"{}\" CONNECTION LIMIT 14", db.name),
    );
    let producer = support::test_producer("AWA_TEST_PRODUCER_IN_FLIGHT=8");
    let (code, got, stderr, report) = run_report(
        &db.dsn(),
        &[
            "--test-threads",
            "2",
            "--producer",
            &producer,
            "producer::routing_precedence::",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        got.len() > 10 && got.iter().all(|(_, s)| s == "passed"),
        "{got:?}"
    );
    let lanes = report["provenance"]["extra"]["producer_in_flight"]
        .as_str()
        .unwrap();
    assert!(
        lanes.starts_with("1 of max_in_flight 8 (the server has"),
        "the lanes ignored the database's limit: {lanes}"
    );
    // Too few slots for the run at all: one line, exit 4, whoever the runner is.
    sql(
        &dsn,
        &format!("ALTER DATABASE \"{}\" CONNECTION LIMIT 5", db.name),
    );
    let out = run(
        &["--dsn", &db.dsn(), "--schema", "awa", "-q", "sql::"],
        &[],
        120,
    );
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(error_line(&out).contains("CONNECTION LIMIT 5"));
}

/// Row counts of every table of the database plus the cluster's roles, leaving out the
/// scratch schemas and roles of the other tests of this binary (they run in parallel).
fn cluster_state(dsn: &str, schema: &str) -> Vec<Vec<Option<String>>> {
    let tables = sql(
        dsn,
        &format!(
            "SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c \
             JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
               AND n.nspname NOT LIKE 'pg_toast%' \
               AND (n.nspname NOT LIKE 'awa\\_t\\_%' OR n.nspname = '{schema}') ORDER BY 1"
        ),
    );
    let mut state: Vec<Vec<Option<String>>> = tables
        .into_iter()
        .map(|t| {
            let name = t[0].clone().unwrap();
            vec![
                Some(name.clone()),
                Some(scalar(dsn, &format!("SELECT count(*) FROM {name}"))),
            ]
        })
        .collect();
    state.extend(sql(
        dsn,
        "SELECT rolname, rolcanlogin::text FROM pg_roles \
         WHERE rolname NOT LIKE 'awa\\_t\\_%' ORDER BY 1",
    ));
    state
}

fn a_run_leaves_every_table_and_the_roles_as_found() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "asfound");
    let before = cluster_state(&s.dsn, &s.schema);
    assert!(before.len() > 10, "{before:?}");
    let out = s.run(&["-q", "sql::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(before, cluster_state(&s.dsn, &s.schema));
}

fn sweep_spares_a_live_run_of_another_database() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "sweepa");
    let other = Database::new(&s.dsn, "sweepb");
    let id = format!("{:0>12}", &suffix()[..10]);
    let role = format!("awa_conformance_{id}_login");
    sql(&s.dsn, &format!("CREATE ROLE \"{role}\" LOGIN"));
    // A live run on the other database: its liveness lock is held there, and its login role
    // exists with no session at this moment (between two of its cases).
    let guard = Held::open(&other.dsn(), &liveness_lock(&id));
    let out = s.run(&["-q", "sql::catalog::capabilities_sorted_unique"]);
    let exists = || {
        scalar(
            &s.dsn,
            &format!("SELECT count(*) FROM pg_roles WHERE rolname = '{role}'"),
        )
    };
    let while_alive = exists();
    drop(guard);
    // Once that run is gone, the next run's sweep removes its role.
    let out2 = s.run(&["-q", "sql::catalog::capabilities_sorted_unique"]);
    let after_death = exists();
    sql(&s.dsn, &format!("DROP ROLE IF EXISTS \"{role}\""));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out2.status.code(), Some(0), "{}", text(&out2.stderr));
    assert_eq!(while_alive, "1", "the live run's login role was dropped");
    assert_eq!(after_death, "0", "the dead run's login role was kept");
}

fn install_refuses_a_different_implementation_status_names_it() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "differs");
    let status = |extra: &[&str]| {
        let mut args = vec!["schema", "status"];
        args.extend(s.args());
        args.extend_from_slice(extra);
        run(&args, &[], 120)
    };
    let out = status(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("same:"),
        "{}",
        text(&out.stdout)
    );
    // A different implementation: one capability less.
    s.sql(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] \
         LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY['job_routing']::text[] $$",
    );
    let out = status(&[]);
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("different:"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "differs: function {}.contract_capabilities()",
            s.schema
        )),
        "{stdout}"
    );
    let install = |force: bool| {
        let mut args = vec!["schema", "install"];
        args.extend(s.args());
        if force {
            args.push("--force");
        }
        run(&args, &[], 120)
    };
    let out = install(false);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(line.contains("holds a different implementation"), "{line}");
    assert!(line.contains("contract_capabilities()"), "{line}");
    assert!(line.contains("--force"), "{line}");
    let caps = scalar(
        &s.dsn,
        &format!("SELECT {}.contract_capabilities()::text", s.schema),
    );
    assert_eq!(
        caps, "{job_routing}",
        "a refused install changed the schema"
    );
    let out = install(true);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&status(&[]).stdout).starts_with("same:"));
    // Re-installing the identical reference changes nothing and says so.
    let out = install(false);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("already installed"),
        "{}",
        text(&out.stdout)
    );
    // Tables and indexes are compared too, not only functions.
    s.sql(
        "ALTER TABLE @S@.contract_jobs ADD COLUMN tenant text; \
         DROP INDEX @S@.idx_awa_jobs_unique",
    );
    let stdout = text(&status(&[]).stdout);
    assert!(
        stdout.contains(&format!("differs: table {}.contract_jobs", s.schema)),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("missing: index {}.idx_awa_jobs_unique", s.schema)),
        "{stdout}"
    );
    let out = install(false);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(error_line(&out).contains("contract_jobs"));
}

/// The cluster's roles, without other tests' scratch roles.
fn roles(dsn: &str) -> Vec<Vec<Option<String>>> {
    sql(
        dsn,
        "SELECT rolname FROM pg_roles WHERE rolname NOT LIKE 'awa\\_t\\_%' \
         OR rolname LIKE 'awa\\_t\\_uninst\\_role%' ORDER BY 1",
    )
}

fn status_missing_and_uninstall_removes_exactly_what_install_created() {
    let dsn = dsn();
    let schema = format!("awa_t_uninst_{}", suffix());
    let role = format!("awa_t_uninst_role_{}", suffix());
    let args = |cmd: &'static str| -> Vec<String> {
        [
            "schema",
            cmd,
            "--dsn",
            &dsn,
            "--schema",
            &schema,
            "--producer-role",
            &role,
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    };
    let go = |cmd: &'static str| {
        let a = args(cmd);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        run(&a, &[], 120)
    };
    let out = go("status");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("missing:"),
        "{}",
        text(&out.stdout)
    );
    let roles_before = roles(&dsn);
    assert_eq!(go("install").status.code(), Some(0));
    // Something that is not the reference's (a released Awa sharing the schema).
    sql(&dsn, &format!("CREATE TABLE \"{schema}\".jobs (id bigint)"));
    let out = go("status");
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("same:"), "{stdout}");
    assert!(stdout.contains("left alone): table"), "{stdout}");
    let out = go("uninstall");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The foreign table and so the schema stay; every reference object and the role go.
    let left = sql(
        &dsn,
        &format!(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = '{schema}' AND c.relkind IN ('r', 'p', 'c') \
             UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n \
             ON n.oid = p.pronamespace WHERE n.nspname = '{schema}' ORDER BY 1"
        ),
    );
    assert_eq!(left, vec![vec![Some("jobs".to_owned())]]);
    assert_eq!(roles(&dsn), roles_before);
    // Without foreign objects, uninstall removes the schema install created, too.
    sql(
        &dsn,
        &format!("DROP TABLE \"{schema}\".jobs; DROP SCHEMA \"{schema}\""),
    );
    assert_eq!(go("install").status.code(), Some(0));
    // A replaced function is someone's implementation now: uninstall refuses.
    sql(
        &dsn,
        &format!(
            "CREATE OR REPLACE FUNCTION \"{schema}\".contract_version() RETURNS integer \
             LANGUAGE sql IMMUTABLE AS $$ SELECT 2 $$"
        ),
    );
    let out = go("uninstall");
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(error_line(&out).contains("contract_version()"));
    assert_eq!(go("install").status.code(), Some(4));
    let a = args("install");
    let mut a: Vec<&str> = a.iter().map(String::as_str).collect();
    a.push("--force");
    assert_eq!(run(&a, &[], 120).status.code(), Some(0));
    let out = go("uninstall");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(&format!("and schema {schema}")),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        scalar(
            &dsn,
            &format!("SELECT count(*) FROM pg_namespace WHERE nspname = '{schema}'")
        ),
        "0"
    );
    assert_eq!(roles(&dsn), roles_before);
}

/// The README's non-superuser path: the database's owner with CREATEROLE (not a superuser)
/// installs, checks, runs against and uninstalls the reference, on PostgreSQL 15 and 16+.
/// Before the fix, install stopped with "permission denied for schema": ALTER FUNCTION ...
/// OWNER TO the bounded owner needs that owner to hold CREATE on the schema, a check only
/// superusers skip.
fn database_owner_with_createrole_installs_runs_and_uninstalls() {
    let admin = dsn();
    let tag = suffix();
    let producer = format!("awa_t_nsu_{tag}_producer");
    let owner = format!("awa_t_nsu_{tag}_owner");
    let installer = Role::new(&admin, "nsu", "NOSUPERUSER NOCREATEROLE");
    let _leftover = Leftover {
        dsn: admin.clone(),
        roles: vec![producer.clone(), owner.clone()],
    };
    let db = Database::owned_by(&admin, "nsu_db", &installer);
    let url = dsn_with(&db.dsn(), &[("user", &installer.name)]);
    let as_installer = |cmd: &str, extra: &[&str]| {
        let mut args = vec!["schema", cmd, "--dsn", &url, "--producer-role", &producer];
        args.extend_from_slice(extra);
        run(&args, &[], 120)
    };
    // Without CREATEROLE the error names exactly that, and the role it would create.
    let out = as_installer("install", &[]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let line = error_line(&out);
    assert!(
        line.contains(&format!(
            "lacks: CREATEROLE (role {producer} does not exist yet); CREATEROLE (role {owner} \
             does not exist yet); grant it"
        )),
        "{line}"
    );
    sql(
        &admin,
        &format!("ALTER ROLE \"{}\" CREATEROLE", installer.name),
    );
    let out = as_installer("install", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = as_installer("status", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("same:"),
        "{}",
        text(&out.stdout)
    );
    // The definer functions belong to the bounded owner, which kept no CREATE on the schema.
    let admin_db = db.dsn();
    assert_eq!(
        scalar(
            &admin_db,
            "SELECT string_agg(DISTINCT proowner::regrole::text, ',') FROM pg_proc \
             WHERE pronamespace = 'awa'::regnamespace AND prosecdef"
        ),
        owner
    );
    assert_eq!(
        scalar(
            &admin_db,
            &format!("SELECT has_schema_privilege('{owner}', 'awa', 'CREATE')")
        ),
        "f"
    );
    // A run as that role, least-privilege cases included (they need CREATEROLE).
    let out = run(
        &[
            "--dsn",
            &url,
            "--producer-role",
            &producer,
            "--require-db",
            "sql::catalog::",
        ],
        &[],
        300,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(
        &[
            "--dsn",
            &url,
            "--producer-role",
            &producer,
            "--require-db",
            "sql::privilege::",
        ],
        &[],
        300,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    assert!(summary.contains("; 0 failed; 0 ignored;"), "{summary}");
    let out = as_installer("uninstall", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("and schema awa"), "{stdout}");
    assert!(stdout.contains("removed producer role"), "{stdout}");
    assert_eq!(
        scalar(
            &admin,
            &format!("SELECT count(*) FROM pg_roles WHERE rolname IN ('{producer}', '{owner}')")
        ),
        "0"
    );
}

/// A schema name that needs quotes (mixed case; a space and a double quote) is one name
/// everywhere: install, status `same`, a run, uninstall, and install again. Before, status
/// compared a function's `SET search_path TO ..., 'AwaMixed'` with `'"AwaMixed"'`, so it
/// said `different` and uninstall and a second install refused. A name spelling the runner's
/// own SQL placeholders (`@T@`, `@ID@`) is text like any other: the run's statements are
/// filled in one pass (`pg::SqlText::fill`), where chained replacements once rewrote the
/// quoted schema's `@T@` into a table name.
fn schema_names_that_need_quotes_install_status_uninstall_reinstall() {
    let dsn = dsn();
    for schema in [
        format!("AwaMixed_{}", suffix()),
        format!("Awa \"Odd\" {}", suffix()),
        format!("awa @T@ @ID@ @L@ {}", suffix()),
    ] {
        let quoted = format!("\"{}\"", schema.replace('"', "\"\""));
        let go = |cmd: &str| {
            run(
                &["schema", cmd, "--dsn", &dsn, "--schema", &schema],
                &[],
                120,
            )
        };
        let gone = || {
            scalar(
                &dsn,
                &format!(
                    "SELECT count(*) FROM pg_namespace WHERE nspname = '{}'",
                    schema.replace('\'', "''")
                ),
            )
        };
        for round in 0..2 {
            let out = go("install");
            assert_eq!(out.status.code(), Some(0), "{round}: {}", text(&out.stderr));
            let out = go("status");
            assert_eq!(out.status.code(), Some(0), "{round}: {}", text(&out.stdout));
            assert!(
                text(&out.stdout).starts_with(&format!("same: schema {quoted} holds")),
                "{round}: {}",
                text(&out.stdout)
            );
            if round == 0 {
                // The catalog reads the schema by name; the rotor's cases make and sweep
                // queues, through every statement the sweep fills.
                for filter in ["sql::catalog::", "sql::rotor::"] {
                    let out = run(
                        &["--dsn", &dsn, "--schema", &schema, "-q", filter],
                        &[],
                        300,
                    );
                    assert_eq!(
                        out.status.code(),
                        Some(0),
                        "{filter}: {}",
                        text(&out.stderr)
                    );
                }
            }
            let out = go("uninstall");
            assert_eq!(out.status.code(), Some(0), "{round}: {}", text(&out.stderr));
            assert_eq!(gone(), "0", "{round}: uninstall left schema {schema}");
        }
    }
    // What the reference SQL cannot carry is refused up front, naming it (exit 3).
    let out = run(
        &["schema", "install", "--dsn", &dsn, "--schema", "it's"],
        &[],
        60,
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        error_line(&out).contains("holds '\\''"),
        "{}",
        text(&out.stderr)
    );
}

/// `schema status` answers with its exit code: 7 when the schema differs from the reference,
/// and lists the first 20 differences with a count of the rest (`--all`: every one).
fn status_different_exits_7_and_bounds_the_details() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "bounded");
    // 25 objects the reference does not have, and one it has, replaced.
    let mut extra: String = (0..25)
        .map(|i| format!("CREATE TABLE @S@.extra_{i:02} (id int);"))
        .collect();
    extra.push_str(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] \
         LANGUAGE sql IMMUTABLE AS $$ SELECT ARRAY['job_routing']::text[] $$;",
    );
    s.sql(&extra);
    let status = |all: bool| {
        let mut args = vec!["schema", "status"];
        args.extend(s.args());
        if all {
            args.push("--all");
        }
        run(&args, &[], 120)
    };
    let out = status(false);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 22, "{stdout}");
    assert!(lines[0].starts_with("different:"), "{stdout}");
    assert!(lines[1].contains("differs: function"), "{stdout}");
    assert!(
        lines[21].starts_with("  ... and 6 more (1 differ, 0 missing, 25 not in the reference)"),
        "{stdout}"
    );
    let out = status(true);
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        27,
        "{}",
        text(&out.stdout)
    );
}

fn main() {
    main_with(vec![
        (
            "read_only_database_is_one_line_exit_4",
            Gate::Dsn,
            read_only_database_is_one_line_exit_4,
        ),
        (
            "missing_privileges_are_named_exit_4",
            Gate::Dsn,
            missing_privileges_are_named_exit_4,
        ),
        (
            "too_few_connections_is_one_line_exit_4",
            Gate::Dsn,
            too_few_connections_is_one_line_exit_4,
        ),
        (
            "lanes_fit_the_free_connection_slots",
            Gate::Dsn,
            lanes_fit_the_free_connection_slots,
        ),
        (
            "role_and_database_timeouts_cannot_break_a_run",
            Gate::Dsn,
            role_and_database_timeouts_cannot_break_a_run,
        ),
        (
            "a_run_leaves_every_table_and_the_roles_as_found",
            Gate::Dsn,
            a_run_leaves_every_table_and_the_roles_as_found,
        ),
        (
            "sweep_spares_a_live_run_of_another_database",
            Gate::Dsn,
            sweep_spares_a_live_run_of_another_database,
        ),
        (
            "install_refuses_a_different_implementation_status_names_it",
            Gate::Dsn,
            install_refuses_a_different_implementation_status_names_it,
        ),
        (
            "status_missing_and_uninstall_removes_exactly_what_install_created",
            Gate::Dsn,
            status_missing_and_uninstall_removes_exactly_what_install_created,
        ),
        (
            "database_owner_with_createrole_installs_runs_and_uninstalls",
            Gate::Dsn,
            database_owner_with_createrole_installs_runs_and_uninstalls,
        ),
        (
            "schema_names_that_need_quotes_install_status_uninstall_reinstall",
            Gate::Dsn,
            schema_names_that_need_quotes_install_status_uninstall_reinstall,
        ),
        (
            "status_different_exits_7_and_bounds_the_details",
            Gate::Dsn,
            status_different_exits_7_and_bounds_the_details,
        ),
        (
            "legal_server_settings_keep_every_verdict",
            Gate::Dsn,
            legal_server_settings_keep_every_verdict,
        ),
        (
            "non_utf8_databases_are_one_line_exit_4",
            Gate::Dsn,
            non_utf8_databases_are_one_line_exit_4,
        ),
        (
            "a_database_connection_limit_binds_a_superuser_runs_logins",
            Gate::Dsn,
            a_database_connection_limit_binds_a_superuser_runs_logins,
        ),
    ]);
}
