//! DB integration tests of the runner: green run, isolation, password hygiene, exit codes 4/5.

// Test code: a panic is the failure report, so unwrap/index/panic/eprint are the point.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

mod support;

use support::{main_with, Gate};

use support::{cases_with, dsn, liveness_lock, run, run_with_report, scalar, text, Held, Scratch};

/// Row counts of every table of the schema, plus the roles of the test's world (a run's login
/// is a member of the world's producer role while it exists).
fn snapshot(s: &Scratch) -> Vec<(String, String)> {
    let tables = s.sql(&format!(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = '{}' AND c.relkind IN ('r', 'p') ORDER BY 1",
        s.schema
    ));
    assert!(
        tables.len() >= 3,
        "expected the reference tables, got {tables:?}"
    );
    let mut out: Vec<(String, String)> = tables
        .into_iter()
        .map(|r| {
            let t = r[0].clone().unwrap();
            let n = scalar(
                &s.dsn,
                &format!("SELECT count(*) FROM \"{}\".\"{t}\"", s.schema),
            );
            (t, n)
        })
        .collect();
    out.push(("roles of the world".to_owned(), s.roles().join(",")));
    out
}

fn full_run_is_green_and_leaves_the_database_as_found() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "green");
    // Pre-existing data the run must neither see as its own nor remove.
    s.sql(
        "INSERT INTO @S@.queue_meta (queue, enqueue_shards) VALUES ('pre_existing', 8); \
         SELECT @S@.insert_job('pre', 'pre_existing', p_unique_key => '\\x01'::bytea, \
                               p_unique_states => B'11111111', p_concurrency_key => 'k'::bytea);",
    );
    let before = snapshot(&s);
    let (out, report) = run_with_report(&s, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}\nstdout: {}",
        text(&out.stderr),
        text(&out.stdout)
    );
    let passed = cases_with(&report, "passed");
    let sql_passed = passed.iter().filter(|n| n.starts_with("sql::")).count();
    // Every suite ran: catalog, function (one per vector), rejection, uniqueness, rotor,
    // width, race and privilege; nothing SQL was skipped or ignored on the reference schema.
    for suite in [
        "catalog",
        "function",
        "rejection",
        "uniqueness",
        "rotor",
        "width",
        "race",
        "privilege",
    ] {
        assert!(
            passed
                .iter()
                .any(|n| n.starts_with(&format!("sql::{suite}::"))),
            "no passed sql::{suite} case"
        );
    }
    assert!(sql_passed > 150, "only {sql_passed} SQL cases passed");
    for status in ["failed", "errored", "not_applicable", "ignored"] {
        let bad: Vec<String> = cases_with(&report, status)
            .into_iter()
            .filter(|n| n.starts_with("sql::"))
            .collect();
        assert!(
            bad.is_empty(),
            "{status} SQL cases on the reference schema: {bad:?}"
        );
    }
    assert_eq!(report["provenance"]["contract_version"], "1");
    assert_eq!(
        report["provenance"]["level"],
        "core+uniqueness+move_shard+bulk+payload"
    );
    // What the level advertises is what the run checked, by the one features rule.
    let db = &report["database_features"];
    assert_eq!(
        db["checked"], "core, payload, uniqueness, bulk, move-shard",
        "{db}"
    );
    assert_eq!(db["core"], true);
    assert!(
        text(&out.stderr)
            .contains("database features checked: core, payload, uniqueness, bulk, move-shard"),
        "{}",
        text(&out.stderr)
    );
    let after = snapshot(&s);
    assert_eq!(
        before, after,
        "row counts changed: the run did not leave the database as found"
    );
}

fn password_never_printed_when_connection_fails() {
    // No database needed: the server is unreachable on purpose.
    let secret = "Sekr1t-pw-do-not-print";
    for (args, env) in [
        (
            vec![
                "--dsn".to_owned(),
                format!("postgres://alice:{secret}@127.0.0.1:1/db"),
                "sql::".to_owned(),
            ],
            vec![],
        ),
        (
            vec!["sql::".to_owned()],
            vec![(
                "DATABASE_URL",
                format!("postgresql://alice:{secret}@127.0.0.1:1/db?connect_timeout=2"),
            )],
        ),
        (
            vec![
                "--dsn".to_owned(),
                format!("host=127.0.0.1 port=1 user=alice password={secret}"),
                "sql::".to_owned(),
            ],
            vec![],
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let report = dir.path().join("r.json");
        let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
        all.extend(["--report-json", report.to_str().unwrap()]);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let out = run(&all, &env, 60);
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(4),
            "unreachable DSN must exit 4; stderr: {stderr}"
        );
        assert!(!stderr.contains(secret), "password in stderr: {stderr}");
        assert!(!text(&out.stdout).contains(secret), "password in stdout");
        if let Ok(r) = std::fs::read_to_string(&report) {
            assert!(!r.contains(secret), "password in the report");
        }
        // One clear line, naming the redacted target.
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(lines.len(), 1, "expected one error line, got: {stderr}");
        assert!(lines[0].contains("127.0.0.1"), "{stderr}");
    }
}

fn password_never_printed_in_a_successful_run() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "pw");
    // Put a password into the DSN (trust/peer auth ignores it; md5/scram needs the real
    // one, so only add it when the DSN has none).
    let secret = "Sekr1t-pw-in-a-working-dsn";
    let Some(with_pw) = s
        .dsn
        .strip_prefix("postgres://")
        .or_else(|| dsn.strip_prefix("postgresql://"))
        .filter(|rest| {
            let userinfo = rest.split(['/', '?']).next().unwrap_or("");
            userinfo.contains('@') && !userinfo.split('@').next().unwrap_or("").contains(':')
        })
        .map(|rest| {
            let (user, host) = rest.split_once('@').unwrap();
            format!("postgres://{user}:{secret}@{host}")
        })
    else {
        eprintln!(
            "note: DATABASE_URL has a password or no user; password-in-success check skipped"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let out = run(
        &[
            s.args_for(&with_pw),
            vec!["--report-json", report.to_str().unwrap(), "sql::catalog::"],
        ]
        .concat(),
        &[],
        120,
    );
    let all = format!(
        "{}{}{}",
        text(&out.stdout),
        text(&out.stderr),
        std::fs::read_to_string(&report).unwrap_or_default()
    );
    if out.status.code() == Some(4) {
        // The server checks passwords: the run cannot succeed with a fake one, but must
        // still not print it.
        assert!(!all.contains(secret));
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(!all.contains(secret), "password printed somewhere: {all}");
}

fn unreachable_dsn_exits_4_with_one_line() {
    let out = run(&["--dsn", "postgres://nobody@127.0.0.1:1/none"], &[], 60);
    assert_eq!(out.status.code(), Some(4));
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{stderr}"
    );
}

fn missing_schema_exits_5() {
    let dsn = dsn();
    let out = run(
        &[
            "--dsn",
            &dsn,
            "--schema",
            "awa_t_does_not_exist_xyz",
            "sql::",
        ],
        &[],
        60,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("does not exist") && stderr.contains("schema install"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{stderr}"
    );
}

fn missing_insert_job_exits_5() {
    let dsn = dsn();
    let s = Scratch::empty(&dsn, "noij");
    let out = s.run(&["sql::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("insert_job does not exist"), "{stderr}");
}

fn wrong_signature_exits_5() {
    let dsn = dsn();
    // A decoy: right name, opts not last (an older shape without the concurrency key).
    let s = Scratch::empty(&dsn, "decoy");
    s.sql(
        "CREATE FUNCTION @S@.insert_job(p_kind text, p_queue text DEFAULT 'default', \
           p_opts jsonb DEFAULT '{}', p_ordering_key bytea DEFAULT NULL) \
         RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'; \
         CREATE FUNCTION @S@.contract_version() RETURNS integer LANGUAGE sql AS 'SELECT 1'",
    );
    let out = s.run(&["sql::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("wrong signature") && stderr.contains("p_opts jsonb"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| !l.trim().is_empty()).count(),
        1,
        "{stderr}"
    );
}

fn overloaded_insert_job_exits_5() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "overload");
    s.sql("CREATE FUNCTION @S@.insert_job(p_kind text, p_opts jsonb) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint'");
    let out = s.run(&["sql::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("overloads"), "{stderr}");
}

fn wrong_contract_version_exits_5() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "ver");
    s.sql("CREATE OR REPLACE FUNCTION @S@.contract_version() RETURNS integer LANGUAGE sql AS 'SELECT 2'");
    let out = s.run(&["sql::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("contract_version() is 2"), "{stderr}");
}

/// A v1.0 database (no `contract_1_1` capability) is refused in preflight with the fix.
fn contract_v1_0_database_exits_5() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "v10");
    s.sql(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] LANGUAGE sql AS \
         $$ SELECT ARRAY['concurrency_digest', 'job_routing']::text[] $$",
    );
    let out = s.run(&["sql::"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("lacks \"contract_1_1\""), "{stderr}");
    assert!(stderr.contains("schema install"), "{stderr}");
}

fn missing_optional_capability_makes_cases_not_applicable() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "caps");
    // The mandatory core only: uniqueness and move_shard are not advertised.
    s.sql(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] LANGUAGE sql AS \
         $$ SELECT ARRAY['concurrency_digest', 'concurrency_shard', 'contract_1_1', \
            'expectations', 'job_routing', 'ordering_shard', 'routing_precedence']::text[] $$",
    );
    let (out, report) = run_with_report(&s, &["sql::"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(report["provenance"]["level"], "core");
    // The core is claimed; each optional feature left out is named with its count, never
    // claimed because some of its cases ran.
    let checked = report["database_features"]["checked"].as_str().unwrap();
    assert!(checked.starts_with("core; "), "{checked}");
    for f in ["payload", "uniqueness", "bulk", "move-shard"] {
        assert!(
            checked.contains(&format!("{f} not checked (")),
            "{f}: {checked}"
        );
    }
    assert!(checked.contains("not applicable"), "{checked}");
    let na = cases_with(&report, "not_applicable");
    for prefix in [
        "sql::function::uk-",
        "sql::uniqueness::",
        "sql::race::",
        "sql::width::move_shard_helper",
        "sql::width::unique_states_bits_helper",
    ] {
        assert!(na.iter().any(|n| n.starts_with(prefix)), "{prefix}: {na:?}");
    }
    // Core cases are never excused.
    assert!(
        na.iter().all(|n| !n.starts_with("sql::function::os-")
            && !n.starts_with("sql::function::cd-")
            && !n.starts_with("sql::rotor::")),
        "{na:?}"
    );
    assert!(cases_with(&report, "passed")
        .iter()
        .any(|n| n.starts_with("sql::function::os-")));
}

fn missing_core_capability_is_one_failure_and_checks_the_core_anyway() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "nocore");
    s.sql(
        "CREATE OR REPLACE FUNCTION @S@.contract_capabilities() RETURNS text[] LANGUAGE sql AS \
         $$ SELECT ARRAY['concurrency_digest', 'contract_1_1', 'unique_key']::text[] $$",
    );
    let (out, report) = run_with_report(&s, &["sql::"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let failed = cases_with(&report, "failed");
    assert_eq!(failed, vec!["sql::catalog::core_capabilities".to_owned()]);
    let case = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "sql::catalog::core_capabilities")
        .unwrap();
    let msg = case["message"].as_str().unwrap();
    assert_eq!(msg.lines().count(), 1, "{msg}");
    for cap in [
        "concurrency_shard",
        "expectations",
        "job_routing",
        "ordering_shard",
        "routing_precedence",
    ] {
        assert!(msg.contains(cap), "{cap} not named: {msg}");
    }
    assert!(!msg.contains("concurrency_digest,"), "{msg}");
    // The routing cases ran (and passed) although their capabilities are not listed.
    let passed = cases_with(&report, "passed");
    assert!(passed.iter().any(|n| n.starts_with("sql::function::os-")));
    assert!(passed.iter().any(|n| n.starts_with("sql::function::uk-")));
    assert_eq!(report["provenance"]["level"], "core+unique_key");
    // The catalog failed, but it was checked: the core's features are named as checked
    // (a failure is the verdict's business, not the coverage's).
    assert_eq!(report["verdict"], "nonconformant");
    assert_eq!(report["database_features"]["core"], true);
}

/// A `job_routing` that gives an id no row or several (a set-returning one in a third-party
/// schema) is never read as one: the suites read a case's jobs in one statement, and a
/// position missing or repeated there is read alone, so the case errors as the one-id read
/// does ("unexpected number of rows"), never passes on a row that is not the job's.
fn job_routing_with_rows(copies: u32) {
    let s = Scratch::install(&dsn(), &format!("routing_rows_{copies}"));
    let def = scalar(
        &s.dsn,
        &format!(
            "SELECT pg_get_functiondef('\"{}\".job_routing(bigint)'::regprocedure)",
            s.schema
        ),
    );
    let schema = format!("\"{}\"", s.schema);
    let from = format!("FROM {schema}.contract_jobs AS j");
    // pg_get_functiondef quotes a name only where it must; the body keeps the installer's quotes.
    let returns = format!("RETURNS {}.job_routing_row", s.schema);
    assert!(def.contains(&from) && def.contains(&returns), "{def}");
    let def = def
        .replace(&returns, &format!("RETURNS SETOF {schema}.job_routing_row"))
        .replace(
            &from,
            &format!("{from} CROSS JOIN pg_catalog.generate_series(1, {copies}) AS g"),
        );
    s.sql(&format!(
        "DROP FUNCTION {schema}.job_routing(bigint); {def}; \
         GRANT EXECUTE ON FUNCTION {schema}.job_routing(bigint) TO @P@"
    ));
    let case = "sql::function::cd-62c3b8da2f17";
    let (out, report) = run_with_report(&s, &["--exact", case]);
    assert_ne!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(cases_with(&report, "passed").is_empty(), "{report}");
    let said: Vec<(String, String)> = ["failed", "errored"]
        .iter()
        .flat_map(|st| support::messages(&report, st))
        .collect();
    assert!(
        said.iter().any(|(n, m)| n == case
            && m.contains("job_routing")
            && m.contains("unexpected number of rows")),
        "{said:?}"
    );
}

fn job_routing_gives_an_id_no_row() {
    job_routing_with_rows(0);
}

fn job_routing_gives_an_id_two_rows() {
    job_routing_with_rows(2);
}

fn startup_sweeps_leftovers_of_killed_runs_only() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "leftovers");
    let dead = "0123456789ab";
    let live = "00000000beef";
    let dead_role = format!("awa_conformance_{dead}_login");
    let live_role = format!("awa_conformance_{live}_login");
    // The live run holds its liveness lock before its role exists: a role of that name
    // without the lock is a killed run's to every other runner's start-up sweep in the
    // cluster. (The test also runs alone: .config/nextest.toml.)
    let guard = Held::open(&dsn, &liveness_lock(live));
    // A killed run's committed widths, job, claim and login role; a live run's rows and role
    // (it holds its liveness lock); rows that merely share the public prefix.
    s.sql(&format!(
        "INSERT INTO @S@.queue_meta (queue, enqueue_shards) VALUES \
           ('awa_conformance_{dead}_priv_w8', 8), ('awa_conformance_{live}_priv_w8', 8), \
           ('awa_conformance_not_a_run', 8); \
         SELECT @S@.insert_job('k', 'awa_conformance_{dead}_race', \
           p_unique_key => '\\xdead01'::bytea, p_unique_states => B'11111111'); \
         SELECT @S@.insert_job('k', 'awa_conformance_{live}_race', \
           p_unique_key => '\\xbeef01'::bytea, p_unique_states => B'11111111'); \
         DROP ROLE IF EXISTS \"{dead_role}\"; DROP ROLE IF EXISTS \"{live_role}\"; \
         CREATE ROLE \"{dead_role}\" LOGIN; CREATE ROLE \"{live_role}\" LOGIN;"
    ));
    let out = s.run(&["-q", "sql::catalog::capabilities_sorted_unique"]);
    drop(guard);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let count = |q: &str| scalar(&s.dsn, &q.replace("@S@", &format!("\"{}\"", s.schema)));
    let left = |id: &str| {
        (
            count(&format!(
                "SELECT count(*) FROM @S@.queue_meta WHERE queue LIKE 'awa\\_conformance\\_{id}%'"
            )),
            count(&format!(
                "SELECT count(*) FROM @S@.contract_jobs WHERE queue LIKE 'awa\\_conformance\\_{id}%'"
            )),
            count(&format!(
                "SELECT count(*) FROM pg_roles WHERE rolname = 'awa_conformance_{id}_login'"
            )),
        )
    };
    let dead_left = left(dead);
    let live_left = left(live);
    let claims = count(
        "SELECT count(*) FROM @S@.job_unique_claims WHERE unique_key IN ('\\xdead01', '\\xbeef01')",
    );
    let decoy =
        count("SELECT count(*) FROM @S@.queue_meta WHERE queue = 'awa_conformance_not_a_run'");
    s.sql(&format!(
        "DROP ROLE IF EXISTS \"{dead_role}\"; DROP ROLE IF EXISTS \"{live_role}\""
    ));
    assert_eq!(
        dead_left,
        ("0".into(), "0".into(), "0".into()),
        "killed run not swept"
    );
    assert_eq!(
        live_left,
        ("1".into(), "1".into(), "1".into()),
        "live run swept"
    );
    assert_eq!(claims, "1", "only the killed run's claim goes");
    assert_eq!(decoy, "1", "a queue outside the run-id pattern was touched");
}

fn pretty_output_starts_with_a_provenance_line() {
    let dsn = dsn();
    let s = Scratch::install(&dsn, "prov");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    let out = s.run(&[
        "--report-json",
        path.to_str().unwrap(),
        "sql::catalog::capabilities_sorted_unique",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let p = &r["provenance"];
    let root = p["vectors_root_sha256"].as_str().unwrap();
    let want = format!(
        "awa-conformance {} · vectors root {}…{} · server {} · contract v1 · database dsn (--dsn) \
         · level core+uniqueness+move_shard+bulk+payload",
        p["kit_version"].as_str().unwrap(),
        &root[..4],
        &root[root.len() - 4..],
        p["server_version"].as_str().unwrap(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().next(), Some(want.as_str()), "{stderr}");
    assert!(!text(&out.stdout).contains("vectors root"));
    // JSON output: stdout carries only JSON events, and no provenance line anywhere.
    let out = s.run(&[
        "--format",
        "json",
        "sql::catalog::capabilities_sorted_unique",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for line in text(&out.stdout).lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    assert!(!text(&out.stderr).contains("vectors root"));
}

fn main() {
    let tests: Vec<(&'static str, Gate, fn())> = vec![
        (
            "job_routing_gives_an_id_no_row",
            Gate::Dsn,
            job_routing_gives_an_id_no_row,
        ),
        (
            "job_routing_gives_an_id_two_rows",
            Gate::Dsn,
            job_routing_gives_an_id_two_rows,
        ),
        (
            "full_run_is_green_and_leaves_the_database_as_found",
            Gate::Dsn,
            full_run_is_green_and_leaves_the_database_as_found,
        ),
        (
            "password_never_printed_when_connection_fails",
            Gate::None,
            password_never_printed_when_connection_fails,
        ),
        (
            "password_never_printed_in_a_successful_run",
            Gate::Dsn,
            password_never_printed_in_a_successful_run,
        ),
        (
            "unreachable_dsn_exits_4_with_one_line",
            Gate::None,
            unreachable_dsn_exits_4_with_one_line,
        ),
        ("missing_schema_exits_5", Gate::Dsn, missing_schema_exits_5),
        (
            "missing_insert_job_exits_5",
            Gate::Dsn,
            missing_insert_job_exits_5,
        ),
        (
            "wrong_signature_exits_5",
            Gate::Dsn,
            wrong_signature_exits_5,
        ),
        (
            "overloaded_insert_job_exits_5",
            Gate::Dsn,
            overloaded_insert_job_exits_5,
        ),
        (
            "contract_v1_0_database_exits_5",
            Gate::Dsn,
            contract_v1_0_database_exits_5,
        ),
        (
            "wrong_contract_version_exits_5",
            Gate::Dsn,
            wrong_contract_version_exits_5,
        ),
        (
            "missing_optional_capability_makes_cases_not_applicable",
            Gate::Dsn,
            missing_optional_capability_makes_cases_not_applicable,
        ),
        (
            "missing_core_capability_is_one_failure_and_checks_the_core_anyway",
            Gate::Dsn,
            missing_core_capability_is_one_failure_and_checks_the_core_anyway,
        ),
        (
            "startup_sweeps_leftovers_of_killed_runs_only",
            Gate::Dsn,
            startup_sweeps_leftovers_of_killed_runs_only,
        ),
        (
            "pretty_output_starts_with_a_provenance_line",
            Gate::Dsn,
            pretty_output_starts_with_a_provenance_line,
        ),
    ];
    main_with(tests);
}
