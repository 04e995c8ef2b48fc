//! The one support module of the runner's integration tests: running the binary (with or
//! without a database), exit codes and output, reports, and for the DB tests their gating and
//! each test's own world ([`Scratch`]).
//!
//! The DB tests take a superuser DSN from `DATABASE_URL` (CI points it at a throwaway cluster).
//! Each DB test binary is a libtest-mimic `main` ([`main_with`]): without a DSN its tests are
//! reported as *ignored*, unless `AWA_REQUIRE_DB=1` (set in CI), which turns a missing DSN
//! into a failure so a green CI run always means the DB tests ran. The offline tests use
//! [`offline`] and the output helpers.

// Each test binary uses a subset; panics are the failure reports of test helpers.
#![allow(
    dead_code,
    unreachable_pub,
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stderr
)]

use std::io::Read;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_awa-conformance");

/// `DATABASE_URL`, when set and not blank.
fn dsn_env() -> Option<String> {
    std::env::var("DATABASE_URL")
        .ok()
        .filter(|d| !d.trim().is_empty())
}

/// Whether `AWA_REQUIRE_DB=1` turns a missing database into a failure.
fn db_required() -> bool {
    std::env::var("AWA_REQUIRE_DB").as_deref() == Ok("1")
}

/// The DSN of a DB test (its trial is ignored when there is none, so this always has one).
pub fn dsn() -> String {
    dsn_env().unwrap_or_else(|| {
        panic!(
            "DATABASE_URL is not set: export a superuser DSN of a scratch cluster so the DB \
             tests run"
        )
    })
}

/// How a test of a harness-less DB test binary is gated.
pub enum Gate {
    /// Needs `DATABASE_URL`: ignored without it (a failure with `AWA_REQUIRE_DB=1`).
    Dsn,
    /// Needs nothing from the environment.
    None,
    /// Needs a condition (e.g. PostgreSQL binaries) described by the string: ignored when
    /// the condition is false (a failure with `AWA_REQUIRE_DB=1`).
    When(bool, &'static str),
}

/// The `main` of a harness-less DB test binary (house rule 7): one libtest-mimic trial per
/// test, shown as *ignored* (never passed) when its database is missing; `AWA_REQUIRE_DB=1`
/// turns that into a failure so a green CI run always means the DB tests ran.
pub fn main_with(tests: Vec<(&'static str, Gate, fn())>) -> ! {
    main_with_boxed(
        tests
            .into_iter()
            .map(|(name, gate, f)| (name.to_owned(), gate, Box::new(f) as TestFn))
            .collect(),
    )
}

/// A test body of [`main_with_boxed`].
pub type TestFn = Box<dyn FnOnce() + Send>;

/// [`main_with`] for tests built at run time (names and bodies from a table).
pub fn main_with_boxed(tests: Vec<(String, Gate, TestFn)>) -> ! {
    let mut args = libtest_mimic::Arguments::from_args();
    // Under cargo-nextest every test is a process of its own and `.config/nextest.toml` says
    // which tests run alone (those that count cluster-wide state). Under plain `cargo test`
    // nothing would keep those apart from this binary's other threads, so a DB binary runs its
    // tests one at a time there unless told otherwise.
    if std::env::var_os("NEXTEST").is_none() && args.test_threads.is_none() {
        args.test_threads = Some(1);
    }
    let trials = tests
        .into_iter()
        .map(|(name, gate, f)| {
            let missing = match gate {
                Gate::Dsn if dsn_env().is_none() => Some("DATABASE_URL is not set"),
                Gate::When(false, what) => Some(what),
                _ => None,
            };
            let required = db_required();
            let trial = libtest_mimic::Trial::test(name, move || match missing {
                Some(what) if required => Err(format!(
                    "AWA_REQUIRE_DB=1 but {what}: export DATABASE_URL (a superuser DSN of a \
                     scratch cluster) / install PostgreSQL so the DB tests run"
                )
                .into()),
                _ => {
                    f();
                    Ok(())
                }
            });
            trial.with_ignored_flag(missing.is_some() && !required)
        })
        .collect();
    libtest_mimic::run(&args, trials).exit()
}

/// A random lowercase suffix for scratch names.
pub fn suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{:010x}", h.finish() & 0xff_ffff_ffff)
}

/// Run SQL (simple query protocol, several statements) and return every row's text cells.
pub fn sql(dsn: &str, text: &str) -> Vec<Vec<Option<String>>> {
    try_sql(dsn, text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// [`sql`] that returns what went wrong instead of panicking (for drops).
pub fn try_sql(dsn: &str, text: &str) -> Result<Vec<Vec<Option<String>>>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("connect for test SQL failed: {e}"))?;
        let task = tokio::spawn(conn);
        let msgs = client
            .simple_query(text)
            .await
            .map_err(|e| format!("test SQL failed: {e:?}"))?;
        drop(client);
        let _ = task.await;
        Ok(msgs
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect())
                }
                _ => None,
            })
            .collect())
    })
}

/// A session of the test's own that ran `setup` (taking a lock, opening a transaction) and
/// holds what it took until [`Held::release`] or drop (closing the session releases it all).
pub struct Held {
    // Declared before the runtime so the client is dropped first; dropping the runtime then
    // ends the connection task, which closes the session.
    client: Option<tokio_postgres::Client>,
    rt: tokio::runtime::Runtime,
}

impl Held {
    pub fn open(dsn: &str, setup: &str) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
                .await
                .unwrap_or_else(|e| panic!("connect for a held session failed: {e}"));
            tokio::spawn(conn);
            client
                .batch_execute(setup)
                .await
                .unwrap_or_else(|e| panic!("held session setup failed: {e:?}\n{setup}"));
            client
        });
        Self {
            client: Some(client),
            rt,
        }
    }

    /// Run `sql` (e.g. `ROLLBACK`, or an unlock) so the release takes effect now, not when the
    /// server notices the closed session.
    pub fn release(mut self, sql: &str) {
        if let Some(client) = self.client.take() {
            self.rt
                .block_on(async { client.batch_execute(sql).await })
                .unwrap_or_else(|e| panic!("held session release failed: {e:?}\n{sql}"));
        }
    }
}

/// The SQL that takes run `id`'s liveness lock, as a live run holds it.
pub fn liveness_lock(id: &str) -> String {
    let (k1, k2) = awa_conformance_runner::contract::sweep::liveness_key(id);
    format!("SELECT pg_advisory_lock({k1}, {k2})")
}

/// One scalar.
pub fn scalar(dsn: &str, text: &str) -> String {
    sql(dsn, text)
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten())
        .unwrap_or_else(|| panic!("no value from {text}"))
}

/// The released CLI: `AWA_CLI`, else `awa` beside the project venv's Python, else on PATH.
pub fn awa_cli() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("AWA_CLI") {
        return Some(std::path::PathBuf::from(p));
    }
    let venv = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/awa");
    if venv.is_file() {
        return Some(venv);
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("awa"))
            .find(|p| p.is_file())
    })
}

/// The oldest released CLI the compat profile checks (the pin of
/// tests/requirements-awa-oldest.txt): `AWA_CLI_OLDEST`, else the venv scripts/install-deps.sh
/// makes for that pin, `target/awa-cli-<version>/bin/awa` (awa-cli installs one `awa`, so each
/// pinned version has a venv of its own).
pub fn awa_cli_oldest() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("AWA_CLI_OLDEST") {
        return Some(std::path::PathBuf::from(p));
    }
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let pins = std::fs::read_to_string(root.join("tests/requirements-awa-oldest.txt")).ok()?;
    let version = pins
        .lines()
        .find_map(|l| l.trim().strip_prefix("awa-cli=="))?
        .trim()
        .to_owned();
    let cli = root.join(format!("target/awa-cli-{version}/bin/awa"));
    cli.is_file().then_some(cli)
}

/// `dsn` with its database replaced: a URL (as the throwaway cluster and CI give it) stays a
/// URL, a key=value string stays one.
pub fn with_db(dsn: &str, db: &str) -> String {
    let Some((head, tail)) = dsn.split_once("://") else {
        let mut pairs = awa_conformance_runner::pg::conninfo::parse_text(dsn)
            .unwrap_or_else(|e| panic!("DATABASE_URL is neither a URL nor key=value: {e}"));
        pairs.retain(|(k, _)| k != "dbname");
        pairs.push(("dbname".to_owned(), db.to_owned()));
        return pairs
            .iter()
            .map(|(k, v)| format!("{k}='{}'", v.replace('\\', "\\\\").replace('\'', "\\'")))
            .collect::<Vec<_>>()
            .join(" ");
    };
    let (auth_host, rest) = tail.split_once('/').unwrap_or((tail, ""));
    let query = rest
        .split_once('?')
        .map_or(String::new(), |(_, q)| format!("?{q}"));
    format!("{head}://{auth_host}/{db}{query}")
}

/// A test's own world: a database of its own, holding one schema, with a producer role (and
/// the function owner derived from it) of its own, all named from the test's label; dropped,
/// roles included, on drop. No test sees another's rows or roles, so DB tests need no lock
/// between them; what counts cluster-wide state runs alone (`.config/nextest.toml`).
pub struct Scratch {
    /// The world's database (URL form).
    pub dsn: String,
    /// The schema inside it (and the database's name).
    pub schema: String,
    /// The world's producer role; its function owner is [`Scratch::owner`].
    pub producer: String,
    /// The cluster's DSN the database was created from (for the drop).
    admin: String,
}

impl Scratch {
    /// A new world `awa_t_<label>_<suffix>`: its database, and in it the reference schema of
    /// that name with the producer role `<name>_producer` (installed by the binary).
    pub fn install(dsn: &str, label: &str) -> Self {
        let s = Self::new(dsn, label);
        let out = run(
            &[
                "schema",
                "install",
                "--dsn",
                &s.dsn,
                "--schema",
                &s.schema,
                "--producer-role",
                &s.producer,
            ],
            &[],
            120,
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "schema install failed: {}",
            text(&out.stderr)
        );
        s
    }

    /// A new world whose schema is empty (for decoys); its producer role is not created.
    pub fn empty(dsn: &str, label: &str) -> Self {
        let s = Self::new(dsn, label);
        sql(&s.dsn, &format!("CREATE SCHEMA \"{}\"", s.schema));
        s
    }

    fn new(dsn: &str, label: &str) -> Self {
        let name = format!("awa_t_{label}_{}", suffix());
        assert!(
            name.len() <= 54,
            "label {label:?} too long for a world name"
        );
        // The world's DSN first: nothing is created when it cannot be written.
        let world = with_db(dsn, &name);
        sql(dsn, &format!("CREATE DATABASE \"{name}\""));
        Self {
            dsn: world,
            producer: format!("{name}_producer"),
            schema: name,
            admin: dsn.to_owned(),
        }
    }

    /// The owner of the world's SECURITY DEFINER functions (schema/006_function_owner.sql).
    pub fn owner(&self) -> String {
        format!("{}_owner", self.schema)
    }

    /// `--dsn`, `--schema` and `--producer-role` of this world, for the binary.
    pub fn args(&self) -> Vec<&str> {
        self.args_for(&self.dsn)
    }

    /// [`Scratch::args`] with another login's DSN of this world's database.
    pub fn args_for<'a>(&'a self, dsn: &'a str) -> Vec<&'a str> {
        vec![
            "--dsn",
            dsn,
            "--schema",
            &self.schema,
            "--producer-role",
            &self.producer,
        ]
    }

    /// Run the conformance suites against this world.
    pub fn run(&self, extra: &[&str]) -> Output {
        let mut args = self.args();
        args.extend_from_slice(extra);
        run(&args, &[], 300)
    }

    /// Run SQL in the world's database with `@S@` replaced by the quoted schema, `@P@` by the
    /// quoted producer role and `@O@` by the quoted function owner.
    pub fn sql(&self, text: &str) -> Vec<Vec<Option<String>>> {
        sql(
            &self.dsn,
            &text
                .replace("@S@", &format!("\"{}\"", self.schema))
                .replace("@P@", &format!("\"{}\"", self.producer))
                .replace("@O@", &format!("\"{}\"", self.owner())),
        )
    }

    /// The roles of the cluster that belong to this world, sorted: its producer role, its
    /// function owner, anything named from it, and every member of its producer role (a run's
    /// temporary login is one until the run drops it). What a run could leave behind in roles.
    pub fn roles(&self) -> Vec<String> {
        self.try_roles().unwrap_or_else(|e| panic!("{e}"))
    }

    fn try_roles(&self) -> Result<Vec<String>, String> {
        try_sql(
            &self.admin,
            &format!(
                "SELECT r.rolname FROM pg_catalog.pg_roles r \
                 WHERE starts_with(r.rolname, '{name}') \
                    OR EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m \
                               JOIN pg_catalog.pg_roles p ON p.oid = m.roleid \
                               WHERE m.member = r.oid AND p.rolname = '{name}_producer') \
                 ORDER BY 1",
                name = self.schema
            ),
        )
        .map(|rows| {
            rows.into_iter()
                .filter_map(|r| r.into_iter().next().flatten())
                .collect()
        })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Best effort (a failed drop leaves only this world behind): the database first, then
        // the world's roles, whatever they still own elsewhere with them.
        let roles = self.try_roles().unwrap_or_default();
        let mut text = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE);", self.schema);
        for r in roles.iter().filter(|r| !r.contains('"')) {
            text.push_str(&format!("DROP OWNED BY \"{r}\"; DROP ROLE \"{r}\";"));
        }
        // One statement at a time: DROP DATABASE cannot run in a transaction block, and one
        // role that cannot go must not keep the others.
        for stmt in text.split_inclusive(';') {
            let _ = try_sql(&self.admin, stmt);
        }
    }
}

/// The binary of this build (never `AWA_CONFORMANCE_BIN`) with no database in its environment:
/// a stray `DATABASE_URL` / `PG*` must not change an offline test, and `AWA_REQUIRE_DB` (set in
/// CI) would turn its database-less runs into errors.
pub fn offline_command() -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars() {
        if key == "DATABASE_URL" || key.starts_with("PG") || key == "AWA_REQUIRE_DB" {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Run [`offline_command`] with `args` to completion.
pub fn offline(args: &[&str]) -> Output {
    offline_command().args(args).output().unwrap()
}

/// The exit code (a test fails on a signal).
pub fn code(out: &Output) -> u8 {
    u8::try_from(out.status.code().unwrap()).unwrap()
}

pub fn stdout(out: &Output) -> String {
    text(&out.stdout)
}

pub fn stderr(out: &Output) -> String {
    text(&out.stderr)
}

pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The JSON report's schema, runner/report.schema.json.
pub fn report_schema() -> jsonschema::Validator {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("report.schema.json");
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&read_json(&path))
        .unwrap()
}

/// Fail unless `report` validates against [`report_schema`].
pub fn assert_valid_report(report: &serde_json::Value) {
    let validator = report_schema();
    let errors: Vec<String> = validator
        .iter_errors(report)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "report does not validate: {errors:?}");
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        buf
    })
}

/// Spawn the binary with a clean database environment (no DATABASE_URL / PG*), plus `env`.
pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> Child {
    // AWA_CONFORMANCE_BIN: another build of this tree's runner: scripts/test.sh passes its
    // release build (the one users run; PostgreSQL keeps the cores), and long measurements pass
    // a copy that a rebuild cannot replace midway (docs/kill-matrix.md).
    let bin = std::env::var("AWA_CONFORMANCE_BIN").unwrap_or_else(|_| BIN.to_owned());
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k == "DATABASE_URL" || k.starts_with("PG") {
            cmd.env_remove(&k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

/// Wait for a child, killing it (and failing) after `secs`: a hang is a test failure.
pub fn wait(mut child: Child, secs: u64) -> Output {
    let out = drain(child.stdout.take().unwrap());
    let err = drain(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(secs);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("awa-conformance did not finish within {secs}s (hang)");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Run the binary to completion.
pub fn run(args: &[&str], env: &[(&str, &str)], secs: u64) -> Output {
    wait(spawn(args, env), secs)
}

/// Run with a JSON report; returns (output, report).
pub fn run_with_report(scratch: &Scratch, extra: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    let p = path.to_str().unwrap().to_owned();
    let mut args: Vec<&str> = vec!["--report-json", &p, "-q"];
    args.extend_from_slice(extra);
    let out = scratch.run(&args);
    let report = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    (out, report)
}

/// (name, message) of every case with `status` in a report.
pub fn messages(report: &serde_json::Value, status: &str) -> Vec<(String, String)> {
    report["cases"]
        .as_array()
        .map(|cases| {
            cases
                .iter()
                .filter(|c| c["status"] == status)
                .map(|c| {
                    (
                        c["name"].as_str().unwrap_or_default().to_owned(),
                        c["message"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Names of cases with the given status in a report.
pub fn cases_with(report: &serde_json::Value, status: &str) -> Vec<String> {
    messages(report, status)
        .into_iter()
        .map(|(name, _)| name)
        .collect()
}

/// The test producer (runner/tests/producers/test_producer.rs, an example of this package:
/// `cargo test` and `cargo build --examples` build it), found beside the test binary
/// (`target/<profile>/examples/test_producer`), as a `--producer` command with `env`
/// (`NAME=VALUE ...`, or empty) before it.
pub fn test_producer(env: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join("test_producer");
    assert!(
        p.exists(),
        "{} is missing: build it with `cargo build -p awa-conformance --examples` \
         (`cargo test` builds it too)",
        p.display()
    );
    format!("{env} {}", p.display()).trim_start().to_owned()
}

/// The test producer as the fake `switch` (`NAME`, or `NAME=PARAM`; the table is
/// runner/tests/producers/fakes.json), with `env` too.
pub fn fake(switch: &str, env: &str) -> String {
    test_producer(&format!("{env} AWA_TEST_PRODUCER_FAKE={switch}"))
}

/// The rows of runner/tests/producers/fakes.json.
pub fn fakes() -> Vec<serde_json::Value> {
    let text = include_str!("../producers/fakes.json");
    let table: serde_json::Value = serde_json::from_str(text).unwrap();
    table["fakes"].as_array().unwrap().clone()
}
