//! The one door to PostgreSQL: DSN resolution, redaction, TLS, timeouts and a small pool.
//!
//! Every database connection the runner makes goes through [`Pg`]. It owns the single tokio
//! runtime of the run; libtest-mimic trials are synchronous closures on worker threads, so
//! they enter it with [`Pg::block_on`]. The DSN password never leaves this module: the only
//! printable form of a DSN is [`Dsn::redacted`], and every error message that could carry
//! server or parser text is passed through [`Dsn::scrub`] first.
//!
//! Settings follow libpq ([`conninfo`]): URIs and key=value strings, the service file, the
//! `PG*` environment and the password file; TLS follows libpq's `sslmode` through rustls
//! ([`tls`]). Each session sets its own timeouts at startup, so a role's or database's
//! `statement_timeout` cannot break a run.

pub mod conninfo;
pub mod tls;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_postgres::config::{
    ChannelBinding, Host, LoadBalanceHosts, SslMode, SslNegotiation, TargetSessionAttrs,
};
use tokio_postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::redact;

/// `application_name` of every runner connection unless the DSN or `PGAPPNAME` sets one
/// (libpq's `fallback_application_name`; tests find the runner's backends by it).
pub const APPLICATION_NAME: &str = "awa-conformance";
/// How long one connection attempt may take by default (`connect_timeout` overrides it).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Server-side cap on one statement and on one lock wait (set per session at startup).
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Server-side cap on a session idle inside a transaction (set per session at startup): a
/// runner killed mid-transaction does not hold locks for long.
pub const IDLE_IN_TRANSACTION_TIMEOUT: Duration = Duration::from_secs(120);
/// Client-side cap on one unit of database work (a trial's batch); a dead or stuck connection
/// surfaces as [`PgError::Timeout`] instead of hanging the run.
pub const WORK_TIMEOUT: Duration = Duration::from_secs(60);

/// The hint of a connection error nothing more specific explains.
pub const HINT_UNREACHABLE: &str = "check that the server is running and the DSN is right";

/// `name` as a double-quoted SQL identifier (a `"` inside is doubled), for SQL text.
#[must_use]
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The longest identifier PostgreSQL keeps (NAMEDATALEN - 1 bytes); a longer one is truncated.
pub const MAX_IDENTIFIER_BYTES: usize = 63;

/// The one placeholder rule of the kit's SQL files (`runner/sql/*.sql`): `@S@` stands for the
/// quoted contract schema, and `@X@` (one capital letter) for another identifier the caller
/// quotes; a placeholder is replaced by text, never bound, because identifiers cannot be
/// parameters. Every file is filled through this trait, so the rule has one place.
pub trait SqlText {
    /// The text with `@S@` replaced by the quoted schema (`SchemaName::quoted`).
    fn in_schema(&self, quoted_schema: &str) -> String;
}

impl SqlText for str {
    fn in_schema(&self, quoted_schema: &str) -> String {
        self.replace("@S@", quoted_schema)
    }
}

impl SqlText for String {
    fn in_schema(&self, quoted_schema: &str) -> String {
        self.as_str().in_schema(quoted_schema)
    }
}

/// The schema holding the contract functions: checked once, where the command line is read,
/// and carried with its quoted form, so SQL text never quotes it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaName {
    name: String,
    quoted: String,
}

impl SchemaName {
    /// Check `name`: PostgreSQL could name a schema so (not empty, no NUL byte, at most
    /// [`MAX_IDENTIFIER_BYTES`] bytes, since a longer name would silently mean its truncation).
    ///
    /// # Errors
    /// What is wrong with the name, and the fix.
    pub fn new(name: &str) -> Result<Self, String> {
        if name.is_empty() {
            return Err(
                "a schema name cannot be empty; pass the schema that holds the contract \
                        (default awa)"
                    .to_owned(),
            );
        }
        if name.contains('\0') {
            return Err("a schema name cannot contain a NUL byte".to_owned());
        }
        if name.len() > MAX_IDENTIFIER_BYTES {
            return Err(format!(
                "{} bytes is longer than PostgreSQL's {MAX_IDENTIFIER_BYTES}-byte identifier \
                 limit, so no schema can have this name; pass the schema's real name",
                name.len()
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            quoted: quote_ident(name),
        })
    }

    /// The name itself, for bind parameters (`nspname = $1`) and messages.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.name
    }

    /// The double-quoted identifier, for SQL text.
    #[must_use]
    pub fn quoted(&self) -> &str {
        &self.quoted
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl std::str::FromStr for SchemaName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::new(name)
    }
}

/// Where the DSN came from (reported in provenance and in errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsnSource {
    /// The `--dsn` option.
    Flag,
    /// The `DATABASE_URL` environment variable.
    DatabaseUrl,
    /// The libpq environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGSERVICE`, ...).
    LibpqEnv,
    /// A throwaway cluster the runner started itself.
    Embedded,
}

impl DsnSource {
    /// A short name for messages.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Flag => "--dsn",
            Self::DatabaseUrl => "DATABASE_URL",
            Self::LibpqEnv => "PG* environment",
            Self::Embedded => "embedded cluster",
        }
    }
}

/// Errors of the database door. Messages never contain a password.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    /// The DSN (or a libpq variable, service file or password file) could not be used.
    #[error("invalid DSN from {source_name}: {reason}")]
    InvalidDsn {
        /// Where the DSN came from.
        source_name: &'static str,
        /// What is wrong, naming the key, value or file (scrubbed).
        reason: String,
    },
    /// The server could not be reached or refused the connection.
    #[error("cannot connect to {dsn}: {reason}; {hint}")]
    Connect {
        /// The redacted DSN.
        dsn: String,
        /// Why (scrubbed).
        reason: String,
        /// What to do about it (depends on the cause).
        hint: String,
    },
    /// The TLS connector could not be built (a certificate or key file).
    #[error("cannot set up TLS: {0}")]
    Tls(String),
    /// The tokio runtime could not be started.
    #[error("cannot start the async runtime: {0}")]
    Runtime(String),
    /// A unit of database work exceeded [`WORK_TIMEOUT`] (dead connection, lock wait).
    #[error("database work timed out after {0:?}; the connection may have been killed or a lock is held")]
    Timeout(Duration),
    /// A connection broke or a query failed outside a conformance check.
    #[error("database error: {0}")]
    Db(String),
}

/// A resolved DSN: the parsed config plus a printable, password-free form.
#[derive(Clone)]
pub struct Dsn {
    config: Config,
    source: DsnSource,
    tls: tls::Settings,
    /// Built on first use and shared by clones (loading the platform roots is slow).
    connector: Arc<OnceLock<Result<MakeRustlsConnect, String>>>,
    connect_timeout: Duration,
    password: Option<String>,
    notes: Vec<String>,
    /// The user's `options` (the runner's session settings are appended at connect time).
    user_options: Option<String>,
    /// Which of [`NEWER_TIMEOUTS`] the server knows (shrinks on "unrecognized parameter").
    newer_timeouts: Arc<Mutex<Vec<&'static str>>>,
}

impl fmt::Debug for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Debug must not leak the password either (panics print Debug).
        f.debug_struct("Dsn")
            .field("dsn", &self.redacted())
            .field("source", &self.source)
            .finish()
    }
}

impl fmt::Display for Dsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

fn env_nonempty(env: &BTreeMap<String, String>, key: &str) -> Option<String> {
    env.get(key).filter(|v| !v.is_empty()).cloned()
}

/// The password written in a DSN string, found without a full parser, used only to scrub
/// messages produced before (or instead of) a successful parse.
fn password_in_text(dsn: &str) -> Option<String> {
    if let Some(rest) = dsn
        .trim_start()
        .strip_prefix("postgres://")
        .or_else(|| dsn.trim_start().strip_prefix("postgresql://"))
    {
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        let userinfo = authority.rsplit_once('@')?.0;
        let pass = userinfo.split_once(':')?.1;
        return (!pass.is_empty()).then(|| pass.to_owned());
    }
    let idx = dsn.find("password")?;
    let after = dsn.get(idx + "password".len()..)?.trim_start();
    let after = after.strip_prefix('=')?.trim_start();
    let pass = if let Some(quoted) = after.strip_prefix('\'') {
        quoted.split('\'').next().unwrap_or("")
    } else {
        after.split_whitespace().next().unwrap_or("")
    };
    (!pass.is_empty()).then(|| pass.to_owned())
}

/// The search path of every session the kit opens (runner, producer engine, fuzz, schema
/// install/status/uninstall, the Python bindings), sent as a startup option so it holds from
/// the first statement and wins over role, database and DSN `options` settings (ADR 0048).
/// With `"$user", public` on the path, a role that can create in `public` or in a schema
/// named after the login can plant a better-matching function or operator (an unknown-typed
/// literal is enough, CVE-2018-1058) that then runs with the runner's rights. `pg_catalog`
/// first and `pg_temp` last, with nothing else, leaves no schema a third party can write to:
/// operators and functions resolve in `pg_catalog` only (functions and operators are never
/// looked up in `pg_temp`), and every contract object is named through its quoted schema.
pub const SESSION_SEARCH_PATH: &str = "pg_catalog,pg_temp";

/// Timeouts only newer servers know (idle_session_timeout 14+, transaction_timeout 17+):
/// the runner turns them off too, and drops each from its startup options once a server
/// says it does not know it (see [`Pg::connect_with`]).
const NEWER_TIMEOUTS: [&str; 2] = ["idle_session_timeout", "transaction_timeout"];

/// The settings every session of the kit pins besides the search path and the timeouts
/// (ADR 0060): each is one a database or role may carry (`ALTER DATABASE|ROLE ... SET`) and
/// that changes how the kit's SQL is parsed, how a value it sends is read, how a value it
/// reads is written, or how its statements may fail. Pinned, a legal server configuration
/// cannot change a verdict. `client_encoding` is UTF8 already (the driver sends it).
/// `default_transaction_read_only` is deliberately not pinned: a read-only database is the
/// owner's decision, refused in one line by a run and honoured by `schema status`.
pub const SESSION_SETTINGS: [(&str, &str); 12] = [
    // A serializable default turns the run's own concurrent statements into 40001 failures.
    ("default_transaction_isolation", "read\\ committed"),
    // pg_get_function_arguments and format_type quote every name under it.
    ("quote_all_identifiers", "off"),
    // Off, a '\x..' literal is an escape string: another digest, or "invalid byte sequence".
    ("standard_conforming_strings", "on"),
    // How dates, times, intervals and time zones the kit reads back are written.
    ("DateStyle", "ISO,MDY"),
    ("IntervalStyle", "postgres"),
    ("TimeZone", "UTC"),
    // How floats and bytea the kit reads as text are written.
    ("extra_float_digits", "1"),
    ("bytea_output", "hex"),
    // `x = NULL` read as `x IS NULL`, and an unquoted NULL in an array literal as a string.
    ("transform_null_equals", "off"),
    ("array_nulls", "on"),
    // On, every error the kit expects (a refusal it checks for) would end the session.
    ("exit_on_error", "off"),
    // Off, a table with row security makes the kit's reads fail instead of filtering.
    ("row_security", "on"),
];

/// The runner's own session settings, sent as startup options: they take precedence over
/// role and database settings (`ALTER ROLE ... SET statement_timeout`) from the first moment
/// of the session, and they come after the user's `options` so they win over those too.
fn session_options(user_options: Option<&str>, newer: &[&str]) -> String {
    let mut ours = format!(
        "-c search_path={SESSION_SEARCH_PATH} -c statement_timeout={} -c lock_timeout={} \
         -c idle_in_transaction_session_timeout={}",
        STATEMENT_TIMEOUT.as_millis(),
        STATEMENT_TIMEOUT.as_millis(),
        IDLE_IN_TRANSACTION_TIMEOUT.as_millis()
    );
    for (name, value) in SESSION_SETTINGS {
        ours.push_str(&format!(" -c {name}={value}"));
    }
    for name in newer {
        ours.push_str(&format!(" -c {name}=0"));
    }
    match user_options.map(str::trim).filter(|o| !o.is_empty()) {
        Some(user) => format!("{user} {ours}"),
        None => ours,
    }
}

/// The values a setting may take, for "X is not one of ..." errors.
fn one_of<T: Copy>(
    s: &conninfo::Settings,
    key: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, String> {
    let Some((value, origin)) = s.get_with_origin(key) else {
        return Ok(None);
    };
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, v)| Some(*v))
        .ok_or_else(|| {
            let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
            format!(
                "{key} {value:?} (from {origin}) is not one of {}",
                names.join(", ")
            )
        })
}

fn number<T: std::str::FromStr>(s: &conninfo::Settings, key: &str) -> Result<Option<T>, String> {
    let Some((value, origin)) = s.get_with_origin(key) else {
        return Ok(None);
    };
    value.trim().parse::<T>().map(Some).map_err(|_| {
        format!("{key} {value:?} (from {origin}) is not a valid number for this setting")
    })
}

impl Dsn {
    /// Resolve the DSN: `--dsn` > `DATABASE_URL` > libpq environment. `Ok(None)` when none
    /// is given (the caller may then start an embedded cluster).
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] when the chosen DSN does not parse.
    pub fn resolve(flag: Option<&str>) -> Result<Option<Self>, PgError> {
        let env: BTreeMap<String, String> = std::env::vars()
            .filter(|(k, _)| {
                k.starts_with("PG") || ["DATABASE_URL", "HOME", "USER"].contains(&k.as_str())
            })
            .collect();
        Self::resolve_from(flag, &env)
    }

    /// [`Dsn::resolve`] with an explicit environment (testable without touching the process env).
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] when the chosen DSN does not parse.
    pub fn resolve_from(
        flag: Option<&str>,
        env: &BTreeMap<String, String>,
    ) -> Result<Option<Self>, PgError> {
        if let Some(text) = flag.filter(|t| !t.trim().is_empty()) {
            return Self::parse(text, DsnSource::Flag, env).map(Some);
        }
        if let Some(text) = env_nonempty(env, "DATABASE_URL") {
            return Self::parse(&text, DsnSource::DatabaseUrl, env).map(Some);
        }
        let libpq = [
            "PGHOST",
            "PGPORT",
            "PGUSER",
            "PGDATABASE",
            "PGHOSTADDR",
            "PGSERVICE",
        ];
        if libpq.iter().any(|k| env_nonempty(env, k).is_some()) {
            return Self::parse("", DsnSource::LibpqEnv, env).map(Some);
        }
        Ok(None)
    }

    /// Parse a DSN string, filling unset settings from the service file, the libpq
    /// environment and the password file, as libpq does.
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] naming the key, value, variable or file at fault.
    pub fn parse(
        text: &str,
        source: DsnSource,
        env: &BTreeMap<String, String>,
    ) -> Result<Self, PgError> {
        let text_password = password_in_text(text);
        // Known before anything can fail, so that no message about this DSN shows them.
        redact::remember_in(text);
        if let Some(pw) = env_nonempty(env, "PGPASSWORD") {
            redact::remember(&pw);
        }
        let invalid = |reason: String| PgError::InvalidDsn {
            source_name: source.as_str(),
            reason: redact::redact_secrets(&reason),
        };
        let mut s = conninfo::resolve(text, env).map_err(&invalid)?;
        let user = s
            .get("user")
            .map(str::to_owned)
            .or_else(|| env_nonempty(env, "USER"))
            .unwrap_or_else(|| "postgres".to_owned());
        conninfo::apply_passfile(&mut s, env, &user);
        let (config, connect_timeout) = Self::config(&s, &user).map_err(&invalid)?;
        let tls = Self::tls_settings(&s, env).map_err(&invalid)?;
        let password = s.get("password").map(str::to_owned).or(text_password);
        // Also the password read from a service or password file: masked from now on.
        if let Some(pw) = &password {
            redact::remember(pw);
        }
        Ok(Self {
            config,
            source,
            tls,
            connector: Arc::new(OnceLock::new()),
            connect_timeout,
            password,
            notes: s.notes.clone(),
            user_options: s.get("options").map(str::to_owned),
            newer_timeouts: Arc::new(Mutex::new(NEWER_TIMEOUTS.to_vec())),
        })
    }

    /// Build the tokio-postgres config from merged settings; every bad value is named.
    fn config(s: &conninfo::Settings, user: &str) -> Result<(Config, Duration), String> {
        let mut c = Config::new();
        c.user(user);
        if let Some(hosts) = s.get("host") {
            for h in hosts.split(',') {
                if h.starts_with('/') {
                    c.host_path(h);
                } else if !h.is_empty() {
                    c.host(h);
                }
            }
        }
        if let Some((addrs, origin)) = s.get_with_origin("hostaddr") {
            for a in addrs.split(',') {
                let ip: IpAddr = a
                    .trim()
                    .parse()
                    .map_err(|_| format!("hostaddr {a:?} (from {origin}) is not an IP address"))?;
                c.hostaddr(ip);
            }
        }
        if c.get_hosts().is_empty() && c.get_hostaddrs().is_empty() {
            c.host("localhost");
        }
        if let Some((ports, origin)) = s.get_with_origin("port") {
            for p in ports.split(',') {
                let port = p
                    .trim()
                    .parse::<u16>()
                    .map_err(|_| format!("port {p:?} (from {origin}) is not a port number"))?;
                c.port(port);
            }
        }
        if let Some(db) = s.get("dbname") {
            c.dbname(db);
        }
        if let Some(pw) = s.get("password") {
            c.password(pw);
        }
        c.application_name(
            s.get("application_name")
                .or_else(|| s.get("fallback_application_name"))
                .unwrap_or(APPLICATION_NAME),
        );
        // libpq: at most the given seconds, at least 2; 0 (or negative) means "wait forever",
        // which a runner must not do, so it means the default here.
        let connect_timeout = match number::<i64>(s, "connect_timeout")? {
            Some(secs) if secs > 0 => Duration::from_secs(secs.max(2).unsigned_abs()),
            _ => CONNECT_TIMEOUT,
        };
        c.connect_timeout(connect_timeout);
        c.keepalives(one_of(s, "keepalives", &[("1", true), ("0", false)])?.unwrap_or(true));
        c.keepalives_idle(Duration::from_secs(
            number::<u64>(s, "keepalives_idle")?.unwrap_or(10),
        ));
        if let Some(secs) = number::<u64>(s, "keepalives_interval")? {
            c.keepalives_interval(Duration::from_secs(secs));
        }
        if let Some(n) = number::<u32>(s, "keepalives_count")? {
            c.keepalives_retries(n);
        }
        if let Some(ms) = number::<u64>(s, "tcp_user_timeout")? {
            c.tcp_user_timeout(Duration::from_millis(ms));
        }
        if let Some(v) = one_of(
            s,
            "channel_binding",
            &[
                ("disable", ChannelBinding::Disable),
                ("prefer", ChannelBinding::Prefer),
                ("require", ChannelBinding::Require),
            ],
        )? {
            c.channel_binding(v);
        }
        if let Some(v) = one_of(
            s,
            "sslnegotiation",
            &[
                ("postgres", SslNegotiation::Postgres),
                ("direct", SslNegotiation::Direct),
            ],
        )? {
            c.ssl_negotiation(v);
        }
        if let Some(v) = one_of(
            s,
            "target_session_attrs",
            &[
                ("any", TargetSessionAttrs::Any),
                ("read-write", TargetSessionAttrs::ReadWrite),
            ],
        )? {
            c.target_session_attrs(v);
        }
        if let Some(v) = one_of(
            s,
            "load_balance_hosts",
            &[
                ("disable", LoadBalanceHosts::Disable),
                ("random", LoadBalanceHosts::Random),
            ],
        )? {
            c.load_balance_hosts(v);
        }
        // The runner has no GSSAPI: "prefer" then means plain TLS/TCP, as libpq without GSS.
        one_of(s, "gssencmode", &[("disable", ()), ("prefer", ())])?;
        Ok((c, connect_timeout))
    }

    /// libpq's TLS rules: the mode, the root file (`sslrootcert`, else `~/.postgresql/root.crt`
    /// when it exists; a root file makes `prefer`/`require` check the chain, as in libpq),
    /// the client certificate (`sslcert`/`sslkey`, else `~/.postgresql/postgresql.{crt,key}`).
    fn tls_settings(
        s: &conninfo::Settings,
        env: &BTreeMap<String, String>,
    ) -> Result<tls::Settings, String> {
        let pg_dir = conninfo::home(env).map(|h| h.join(".postgresql"));
        let default_file = |name: &str| {
            pg_dir
                .as_ref()
                .map(|d| d.join(name))
                .filter(|p| p.is_file())
        };
        let rootcert = s.get("sslrootcert");
        let mode = match s.get_with_origin("sslmode") {
            Some((text, origin)) => tls::Mode::parse(text).ok_or_else(|| {
                format!(
                    "sslmode {text:?} (from {origin}) is not one of disable, allow, prefer, \
                     require, verify-ca, verify-full"
                )
            })?,
            // libpq: sslrootcert=system implies verify-full.
            None if rootcert == Some("system") => tls::Mode::VerifyFull,
            None => tls::Mode::Prefer,
        };
        if rootcert == Some("system") && mode != tls::Mode::VerifyFull {
            return Err(format!(
                "sslmode {:?} may not be used with sslrootcert=system (use verify-full)",
                mode.as_str()
            ));
        }
        let root_file = match rootcert {
            Some("system") => None,
            Some(path) => Some(PathBuf::from(path)),
            None => default_file("root.crt"),
        };
        let check = match (mode, &root_file) {
            (tls::Mode::Disable, _) => tls::Check::None,
            (tls::Mode::VerifyFull, _) => tls::Check::Full,
            (tls::Mode::VerifyCa, _) | (_, Some(_)) => tls::Check::Chain,
            _ => tls::Check::None,
        };
        let roots = root_file.map_or(tls::Roots::System, tls::Roots::File);
        let cert = s
            .get("sslcert")
            .map(PathBuf::from)
            .or_else(|| default_file("postgresql.crt"));
        let client = match cert {
            None => None,
            Some(cert) => {
                let key = s
                    .get("sslkey")
                    .map(PathBuf::from)
                    .or_else(|| pg_dir.as_ref().map(|d| d.join("postgresql.key")))
                    .ok_or_else(|| {
                        format!(
                            "sslcert {} is set but no sslkey (and no home directory for the \
                             default key file)",
                            cert.display()
                        )
                    })?;
                Some((cert, key))
            }
        };
        let sni = one_of(s, "sslsni", &[("1", true), ("0", false)])?.unwrap_or(true);
        Ok(tls::Settings {
            mode,
            check,
            roots,
            client,
            sni,
        })
    }

    /// A DSN for a unix-socket cluster (the embedded one).
    #[must_use]
    pub fn unix_socket(dir: &std::path::Path, port: u16, user: &str, dbname: &str) -> Self {
        let mut config = Config::new();
        config
            .host_path(dir)
            .port(port)
            .user(user)
            .dbname(dbname)
            .ssl_mode(SslMode::Disable)
            .application_name(APPLICATION_NAME)
            .connect_timeout(CONNECT_TIMEOUT);
        Self {
            config,
            source: DsnSource::Embedded,
            tls: tls::Settings {
                mode: tls::Mode::Disable,
                check: tls::Check::None,
                roots: tls::Roots::System,
                client: None,
                sni: true,
            },
            connector: Arc::new(OnceLock::new()),
            connect_timeout: CONNECT_TIMEOUT,
            password: None,
            notes: Vec::new(),
            user_options: None,
            newer_timeouts: Arc::new(Mutex::new(NEWER_TIMEOUTS.to_vec())),
        }
    }

    /// The same server and credentials as another login role (least-privilege suite).
    #[must_use]
    pub fn with_user(&self, user: &str, password: &str) -> Self {
        let mut d = self.clone();
        d.config.user(user).password(password);
        // Masked from now on, as the run's own password already is.
        redact::remember(password);
        d.password = Some(password.to_owned());
        // The run's client certificate names the run's user, not this one.
        if d.tls.client.is_some() {
            d.tls.client = None;
            d.connector = Arc::new(OnceLock::new());
        }
        d
    }

    /// Where the DSN came from.
    #[must_use]
    pub fn source(&self) -> DsnSource {
        self.source
    }

    /// The role the DSN logs in as.
    #[must_use]
    pub fn user(&self) -> &str {
        self.config.get_user().unwrap_or("")
    }

    /// The effective `sslmode`.
    #[must_use]
    pub fn ssl_mode(&self) -> tls::Mode {
        self.tls.mode
    }

    /// A printable form: `postgres://user@host:port/db?sslmode=...`, never the password.
    #[must_use]
    pub fn redacted(&self) -> String {
        let c = &self.config;
        let mut hosts: Vec<String> = c
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(s) => s.clone(),
                Host::Unix(p) => p.display().to_string(),
            })
            .collect();
        if hosts.is_empty() {
            hosts = c.get_hostaddrs().iter().map(ToString::to_string).collect();
        }
        let port = c
            .get_ports()
            .first()
            .map_or_else(|| "5432".to_owned(), u16::to_string);
        let pass = if self.password.is_some() { ":***" } else { "" };
        format!(
            "postgres://{}{pass}@{}:{port}/{}?sslmode={}",
            c.get_user().unwrap_or(""),
            hosts.join(","),
            c.get_dbname().unwrap_or(c.get_user().unwrap_or("")),
            self.tls.mode.as_str(),
        )
    }

    /// A libpq key=value connection string with the password (for a child process's
    /// environment only, e.g. a producer's `AWA_CONFORMANCE_DSN`; never print it): host(s),
    /// port, user, dbname, password and sslmode.
    #[must_use]
    pub fn conninfo(&self) -> String {
        // libpq quoting: single quotes, backslash before `'` and `\`.
        let q = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
        let c = &self.config;
        let hosts: Vec<String> = c
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(s) => s.clone(),
                Host::Unix(p) => p.display().to_string(),
            })
            .collect();
        let mut parts = Vec::new();
        if !hosts.is_empty() {
            parts.push(format!("host={}", q(&hosts.join(","))));
        }
        if let Some(port) = c.get_ports().first() {
            parts.push(format!("port={port}"));
        }
        if let Some(user) = c.get_user() {
            parts.push(format!("user={}", q(user)));
        }
        if let Some(db) = c.get_dbname() {
            parts.push(format!("dbname={}", q(db)));
        }
        if let Some(pw) = &self.password {
            parts.push(format!("password={}", q(pw)));
        }
        parts.push(format!("sslmode={}", self.tls.mode.as_str()));
        parts.join(" ")
    }

    /// The same login as a `postgres://` URL with the password (for a child process's
    /// environment only: a producer's `AWA_CONFORMANCE_DSN_URL`; never print it), for drivers
    /// that open URLs only (asyncpg, node-postgres's `connectionString`): user, password,
    /// the first host (a Unix socket directory as the `host` parameter), port, dbname,
    /// sslmode and the user's `options`, every part percent-encoded.
    #[must_use]
    pub fn url(&self) -> String {
        use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
        // RFC 3986's unreserved characters stay as they are; everything else is encoded.
        const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
            .remove(b'-')
            .remove(b'.')
            .remove(b'_')
            .remove(b'~');
        let enc = |v: &str| utf8_percent_encode(v, COMPONENT).to_string();
        let c = &self.config;
        let mut query = vec![format!("sslmode={}", self.tls.mode.as_str())];
        let port = c.get_ports().first().copied();
        let (host, port) = match c.get_hosts().first() {
            // An IPv6 address goes in brackets, as a URL host must.
            Some(Host::Tcp(h)) if h.contains(':') => (
                format!("[{h}]"),
                port.map_or_else(String::new, |p| format!(":{p}")),
            ),
            Some(Host::Tcp(h)) => (enc(h), port.map_or_else(String::new, |p| format!(":{p}"))),
            // libpq's documented form for a socket directory: host and port as parameters.
            Some(Host::Unix(dir)) => {
                query.push(format!("host={}", enc(&dir.display().to_string())));
                if let Some(p) = port {
                    query.push(format!("port={p}"));
                }
                (String::new(), String::new())
            }
            None => (String::new(), String::new()),
        };
        let user = c.get_user().map(enc).unwrap_or_default();
        let password = self
            .password
            .as_deref()
            .map_or_else(String::new, |pw| format!(":{}", enc(pw)));
        let at = if user.is_empty() && password.is_empty() {
            ""
        } else {
            "@"
        };
        if let Some(options) = &self.user_options {
            query.push(format!("options={}", enc(options)));
        }
        format!(
            "postgresql://{user}{password}{at}{host}{port}/{}?{}",
            c.get_dbname().map(enc).unwrap_or_default(),
            query.join("&")
        )
    }

    /// Remove the password from any text (server or library messages): the one masking door
    /// ([`redact::redact_secrets`]), which knows this DSN's password since it was built.
    #[must_use]
    pub fn scrub(&self, text: &str) -> String {
        redact::redact_secrets(text)
    }

    /// The TLS connector (built once per DSN and its clones).
    fn connector(&self) -> Result<MakeRustlsConnect, PgError> {
        self.connector
            .get_or_init(|| tls::connector(&self.tls))
            .clone()
            .map_err(|e| PgError::Tls(self.scrub(&e)))
    }
}

/// Render a tokio-postgres error with its server fields (SQLSTATE, detail), scrubbed.
#[must_use]
pub fn describe_error(dsn: &Dsn, e: &tokio_postgres::Error) -> String {
    let text = match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{} ({})", db.message(), db.code().code());
            if let Some(d) = db.detail() {
                s.push_str(&format!("; detail: {d}"));
            }
            s
        }
        None => {
            // Include the source chain: "error connecting to server: Connection refused".
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                let t = inner.to_string();
                if !s.contains(&t) {
                    s.push_str(&format!(": {t}"));
                }
                src = inner.source();
            }
            s
        }
    };
    dsn.scrub(&text)
}

/// What to do about a failed connection attempt, by cause.
fn connect_hint(dsn: &Dsn, e: &tokio_postgres::Error) -> String {
    let code = e.as_db_error().map(|d| d.code().code().to_owned());
    let mut hint = match code.as_deref() {
        Some("53300") => "the server has no free connection slot (max_connections, or a \
            CONNECTION LIMIT on the role or database): close other sessions or raise the limit \
            (README, \"What a run needs from the database\")"
            .to_owned(),
        Some("57P03") => {
            "the server is starting up, shutting down or in recovery: wait and rerun".to_owned()
        }
        Some("28P01") => format!(
            "the password of role {} was refused: check the password (DSN, PGPASSWORD or the \
             password file)",
            dsn.user()
        ),
        Some("28000") => "the server refuses this login (pg_hba.conf, or the role may not log \
            in): check user, database, sslmode and client certificate"
            .to_owned(),
        Some("3D000") => "the database does not exist: check dbname".to_owned(),
        Some("57014" | "25P04") => "a server-side timeout cancelled the runner's session \
            setup: check the role's and database's transaction_timeout"
            .to_owned(),
        Some(_) => "the server refused the session: see its message".to_owned(),
        None if tls::is_tls_error(e) => format!(
            "the TLS handshake failed under sslmode={}: check sslrootcert (the CA that signed \
             the server's certificate), the host name (verify-full) and sslcert/sslkey",
            dsn.tls.mode.as_str()
        ),
        None if e.to_string().contains("TLS") || describe_error(dsn, e).contains("ssl") => {
            format!(
                "the server does not accept TLS under sslmode={}: enable ssl on the server or \
                 use sslmode=prefer",
                dsn.tls.mode.as_str()
            )
        }
        None => HINT_UNREACHABLE.to_owned(),
    };
    for note in &dsn.notes {
        hint.push_str(&format!(" (note: {note})"));
    }
    hint
}

/// The bound on one whole connection attempt: `connect_timeout` for reaching the server, and
/// one more for the TLS handshake and the login, which tokio-postgres does not bound.
fn attempt_bound(connect_timeout: Duration) -> Duration {
    connect_timeout.saturating_mul(2)
}

/// Why an attempt that hit [`attempt_bound`] failed, naming the time really waited.
fn no_answer_reason(connect_timeout: Duration) -> String {
    format!(
        "no answer within {:?} (twice connect_timeout={}: once to reach the server, once for \
         the TLS handshake and login)",
        attempt_bound(connect_timeout),
        connect_timeout.as_secs()
    )
}

/// How one connection attempt failed.
enum Attempt {
    /// The server or the network refused it (the caller classifies and may retry).
    Refused(tokio_postgres::Error),
    /// Anything else (TLS set-up, timeout), already a [`PgError`].
    Other(PgError),
}

/// The statements prepared on one connection, by SQL text: a statement run on every case
/// is prepared once per connection, not once per run of it (one round trip saved each
/// time). Bound to the connection it was filled on: clear it when the connection changes.
#[derive(Debug, Default)]
pub struct Statements(Mutex<std::collections::HashMap<String, tokio_postgres::Statement>>);

impl Statements {
    /// Forget every statement (the connection they were prepared on is gone).
    pub fn clear(&self) {
        if let Ok(mut map) = self.0.lock() {
            map.clear();
        }
    }

    fn cached(&self, sql: &str) -> Option<tokio_postgres::Statement> {
        self.0.lock().ok().and_then(|map| map.get(sql).cloned())
    }

    /// `sql` prepared on `client`, from the cache when it was prepared before.
    ///
    /// # Errors
    /// The server's error preparing it.
    pub async fn get(
        &self,
        client: &Client,
        sql: &str,
    ) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
        if let Some(st) = self.cached(sql) {
            return Ok(st);
        }
        let st = client.prepare(sql).await?;
        if let Ok(mut map) = self.0.lock() {
            map.insert(sql.to_owned(), st.clone());
        }
        Ok(st)
    }
}

/// A connection with its [`Statements`]: queries by SQL text, each text prepared once.
#[derive(Debug, Clone, Copy)]
pub struct Cached<'a> {
    /// The connection.
    pub client: &'a Client,
    statements: &'a Statements,
}

type Params<'p> = &'p [&'p (dyn tokio_postgres::types::ToSql + Sync)];

impl<'a> Cached<'a> {
    /// `client` with the statements prepared on it.
    #[must_use]
    pub fn new(client: &'a Client, statements: &'a Statements) -> Self {
        Self { client, statements }
    }

    /// `sql` prepared, once.
    ///
    /// # Errors
    /// The server's error preparing it.
    pub async fn statement(
        &self,
        sql: &str,
    ) -> Result<tokio_postgres::Statement, tokio_postgres::Error> {
        self.statements.get(self.client, sql).await
    }

    /// [`Client::query`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error.
    pub async fn query(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.query(&st, params).await
    }

    /// [`Client::query_one`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error, or not exactly one row.
    pub async fn query_one(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<tokio_postgres::Row, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.query_one(&st, params).await
    }

    /// [`Client::execute`] of `sql`, prepared once.
    ///
    /// # Errors
    /// The server's error.
    pub async fn execute(
        &self,
        sql: &str,
        params: Params<'_>,
    ) -> Result<u64, tokio_postgres::Error> {
        let st = self.statements.get(self.client, sql).await?;
        self.client.execute(&st, params).await
    }
}

/// The database door of one run: a runtime, a DSN and a pool of ready connections.
pub struct Pg {
    rt: tokio::runtime::Runtime,
    dsn: Dsn,
    pool: Mutex<Vec<Client>>,
}

impl fmt::Debug for Pg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pg").field("dsn", &self.dsn).finish()
    }
}

/// A pooled connection; returned to the pool on drop only if it was marked clean (no open
/// transaction, no query in flight) and did not break.
pub struct PooledClient {
    pg: Arc<Pg>,
    client: Option<Client>,
    clean: bool,
}

impl PooledClient {
    /// The client.
    ///
    /// # Errors
    /// Never in practice: the client is only taken out by drop.
    pub fn get(&mut self) -> Result<&mut Client, PgError> {
        self.client
            .as_mut()
            .ok_or_else(|| PgError::Db("pooled connection already released".to_owned()))
    }

    /// Declare the session idle and reusable (after a successful ROLLBACK). A connection
    /// abandoned mid-transaction (timeout, error) is closed instead of reused.
    pub fn mark_clean(&mut self) {
        self.clean = true;
    }
}

impl Drop for PooledClient {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            if self.clean && !c.is_closed() {
                if let Ok(mut pool) = self.pg.pool.lock() {
                    pool.push(c);
                }
            }
        }
    }
}

impl Pg {
    /// Start the run's runtime for `dsn` (no connection yet).
    ///
    /// # Errors
    /// [`PgError::Runtime`].
    pub fn new(dsn: Dsn) -> Result<Arc<Self>, PgError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("awa-conformance-db")
            .build()
            .map_err(|e| PgError::Runtime(e.to_string()))?;
        Ok(Arc::new(Self {
            rt,
            dsn,
            pool: Mutex::new(Vec::new()),
        }))
    }

    /// The DSN.
    #[must_use]
    pub fn dsn(&self) -> &Dsn {
        &self.dsn
    }

    /// Run a future on the run's runtime from a synchronous thread (a trial), bounded by
    /// [`WORK_TIMEOUT`].
    ///
    /// # Errors
    /// [`PgError::Timeout`] when the work does not finish in time.
    pub fn block_on<F, T>(&self, fut: F) -> Result<T, PgError>
    where
        F: Future<Output = T>,
    {
        self.rt
            .block_on(async { tokio::time::timeout(WORK_TIMEOUT, fut).await })
            .map_err(|_| PgError::Timeout(WORK_TIMEOUT))
    }

    /// Open a new connection with `dsn` (TLS as the DSN asks), the session settings sent as
    /// startup options. A server that does not know one of [`NEWER_TIMEOUTS`] refuses the
    /// session (42704); the runner then retries without it and remembers that for the DSN.
    ///
    /// # Errors
    /// [`PgError::Connect`] (with a hint that depends on the cause) or [`PgError::Tls`].
    pub async fn connect_with(dsn: &Dsn) -> Result<Client, PgError> {
        loop {
            let newer = dsn
                .newer_timeouts
                .lock()
                .map(|v| v.clone())
                .unwrap_or_default();
            let mut config = dsn.config.clone();
            config.options(session_options(dsn.user_options.as_deref(), &newer));
            match Self::connect_once(dsn, config).await {
                Err(Attempt::Refused(e)) => {
                    let unknown = e
                        .as_db_error()
                        .filter(|d| d.code().code() == "42704")
                        .and_then(|d| newer.iter().copied().find(|n| d.message().contains(n)));
                    match (unknown, dsn.newer_timeouts.lock()) {
                        (Some(name), Ok(mut known)) => known.retain(|n| *n != name),
                        _ => return Err(Self::connect_error(dsn, &e)),
                    }
                }
                Err(Attempt::Other(e)) => return Err(e),
                Ok(client) => return Ok(client),
            }
        }
    }

    fn connect_error(dsn: &Dsn, e: &tokio_postgres::Error) -> PgError {
        PgError::Connect {
            dsn: dsn.redacted(),
            reason: describe_error(dsn, e),
            hint: connect_hint(dsn, e),
        }
    }

    async fn connect_once(dsn: &Dsn, mut config: Config) -> Result<Client, Attempt> {
        // tokio-postgres bounds only the TCP connect of each host by connect_timeout; a server
        // that accepts and then stays silent (TLS handshake, login) would hold the attempt
        // forever. So the whole attempt gets one more connect_timeout, and the message names
        // the bound really waited, with where it comes from.
        let bound = attempt_bound(dsn.connect_timeout);
        let no_answer = || {
            Attempt::Other(PgError::Connect {
                dsn: dsn.redacted(),
                reason: no_answer_reason(dsn.connect_timeout),
                hint: HINT_UNREACHABLE.to_owned(),
            })
        };
        if dsn.tls.mode == tls::Mode::Disable {
            config.ssl_mode(SslMode::Disable);
            let (client, conn) = tokio::time::timeout(bound, config.connect(tokio_postgres::NoTls))
                .await
                .map_err(|_| no_answer())?
                .map_err(Attempt::Refused)?;
            tokio::spawn(conn);
            Ok(client)
        } else {
            config.ssl_mode(match dsn.tls.mode {
                tls::Mode::Allow | tls::Mode::Prefer => SslMode::Prefer,
                _ => SslMode::Require,
            });
            let tls = dsn.connector().map_err(Attempt::Other)?;
            let (client, conn) = tokio::time::timeout(bound, config.connect(tls))
                .await
                .map_err(|_| no_answer())?
                .map_err(Attempt::Refused)?;
            tokio::spawn(conn);
            Ok(client)
        }
    }

    /// Open a new (unpooled) connection with the run's DSN.
    ///
    /// # Errors
    /// As [`Pg::connect_with`].
    pub async fn connect(&self) -> Result<Client, PgError> {
        Self::connect_with(&self.dsn).await
    }

    /// Take a pooled connection (or open one).
    ///
    /// # Errors
    /// As [`Pg::connect_with`].
    pub async fn pooled(self: &Arc<Self>) -> Result<PooledClient, PgError> {
        let reused = self.pool.lock().ok().and_then(|mut p| {
            // Drop any connection that died while idle.
            p.retain(|c| !c.is_closed());
            p.pop()
        });
        let client = match reused {
            Some(c) => c,
            None => self.connect().await?,
        };
        Ok(PooledClient {
            pg: Arc::clone(self),
            client: Some(client),
            clean: false,
        })
    }

    /// Render a query error (scrubbed).
    #[must_use]
    pub fn describe(&self, e: &tokio_postgres::Error) -> String {
        describe_error(&self.dsn, e)
    }
}

impl PgError {
    /// The kind of run error this is: an unusable DSN is a usage error, no connection means
    /// no database, anything else broke the harness.
    #[must_use]
    pub fn kind(&self) -> crate::error::Kind {
        use crate::error::Kind;
        match self {
            PgError::InvalidDsn { .. } => Kind::Usage,
            PgError::Connect { .. } | PgError::Tls(_) => Kind::Connect,
            PgError::Runtime(_) | PgError::Timeout(_) | PgError::Db(_) => Kind::Harness,
        }
    }
}

impl From<PgError> for crate::error::Error {
    fn from(e: PgError) -> Self {
        Self::caused(e.kind(), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_checked_once_and_carried_quoted() {
        let s = SchemaName::new("My \"odd\" schema").unwrap();
        assert_eq!(s.quoted(), "\"My \"\"odd\"\" schema\"");
        assert_eq!(s.as_str(), "My \"odd\" schema");
        assert_eq!(s.to_string(), "My \"odd\" schema");
        assert!(SchemaName::new("").is_err());
        assert!(SchemaName::new("a\0b").is_err());
        assert!(SchemaName::new(&"a".repeat(MAX_IDENTIFIER_BYTES)).is_ok());
        assert!(SchemaName::new(&"a".repeat(MAX_IDENTIFIER_BYTES + 1)).is_err());
    }

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_url_form_opens_the_same_login() {
        let none = env(&[]);
        for written in [
            "host=db.example port=5433 user='me@corp' password='p@ss/w:rd é' dbname='my db' \
             sslmode=disable options='-c geqo=off'",
            "postgresql://u:secret@127.0.0.1:55432/awa_test?sslmode=disable",
            "host=/var/run/postgresql port=5999 user=postgres dbname=x sslmode=disable",
            "host=::1 port=5432 user=postgres dbname=x sslmode=disable",
        ] {
            let d = Dsn::parse(written, DsnSource::Flag, &none).unwrap();
            let url = d.url();
            assert!(url.starts_with("postgresql://"), "{url}");
            let again =
                Dsn::parse(&url, DsnSource::Flag, &none).unwrap_or_else(|e| panic!("{url}: {e}"));
            assert_eq!(again.conninfo(), d.conninfo(), "{written} -> {url}");
            assert_eq!(again.user_options, d.user_options, "{url}");
        }
    }

    #[test]
    fn precedence_flag_then_database_url_then_libpq() {
        let e = env(&[("DATABASE_URL", "postgres://u1@h1:1/d1"), ("PGHOST", "h2")]);
        let d = Dsn::resolve_from(Some("postgres://u0@h0:5/d0"), &e)
            .unwrap()
            .unwrap();
        assert_eq!(d.source(), DsnSource::Flag);
        assert!(d.redacted().contains("u0@h0:5/d0"), "{}", d.redacted());
        let d = Dsn::resolve_from(None, &e).unwrap().unwrap();
        assert_eq!(d.source(), DsnSource::DatabaseUrl);
        assert!(d.redacted().contains("u1@h1:1/d1"));
        let e = env(&[("PGHOST", "h2"), ("PGPORT", "7"), ("PGUSER", "u2")]);
        let d = Dsn::resolve_from(None, &e).unwrap().unwrap();
        assert_eq!(d.source(), DsnSource::LibpqEnv);
        assert!(d.redacted().contains("u2@h2:7"), "{}", d.redacted());
        assert!(Dsn::resolve_from(None, &env(&[("PGPASSWORD", "x")]))
            .unwrap()
            .is_none());
    }

    #[test]
    fn password_never_in_redacted_or_debug() {
        for text in [
            "postgres://bob:s3cr3t-pw@db:5432/app",
            "host=db user=bob password=s3cr3t-pw dbname=app",
        ] {
            let d = Dsn::parse(text, DsnSource::Flag, &BTreeMap::new()).unwrap();
            assert!(!d.redacted().contains("s3cr3t-pw"));
            assert!(!format!("{d:?}").contains("s3cr3t-pw"));
            assert!(d.redacted().contains(":***@"));
            assert_eq!(d.scrub("auth failed s3cr3t-pw"), "auth failed ***");
        }
        let d = Dsn::parse(
            "postgres://bob@db/app",
            DsnSource::Flag,
            &env(&[("PGPASSWORD", "envpw")]),
        )
        .unwrap();
        assert_eq!(d.scrub("x envpw"), "x ***");
    }

    #[test]
    fn invalid_dsn_error_is_scrubbed() {
        let err = Dsn::parse(
            "postgres://bob:s3cr3t-pw@db:notaport/app",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap_err();
        assert!(!err.to_string().contains("s3cr3t-pw"), "{err}");
    }

    #[test]
    fn sslmodes() {
        let e = BTreeMap::new();
        let d = Dsn::parse("postgres://u@h/d?sslmode=verify-full", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.check, tls::Check::Full);
        assert_eq!(d.tls.roots, tls::Roots::System);
        let d = Dsn::parse("postgres://u@h/d?sslmode=verify-ca", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.check, tls::Check::Chain);
        assert!(
            d.redacted().ends_with("sslmode=verify-ca"),
            "{}",
            d.redacted()
        );
        let d = Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "require")]),
        )
        .unwrap();
        assert_eq!(
            (d.tls.mode, d.tls.check),
            (tls::Mode::Require, tls::Check::None)
        );
        // libpq: a root file makes require check the chain.
        let d = Dsn::parse(
            "host=h sslmode=require sslrootcert=/ca.pem",
            DsnSource::Flag,
            &e,
        )
        .unwrap();
        assert_eq!(d.tls.check, tls::Check::Chain);
        assert_eq!(d.tls.roots, tls::Roots::File("/ca.pem".into()));
        let d = Dsn::parse("host=h sslrootcert=system", DsnSource::Flag, &e).unwrap();
        assert_eq!(d.tls.mode, tls::Mode::VerifyFull);
        let err = Dsn::parse(
            "host=h sslmode=require sslrootcert=system",
            DsnSource::Flag,
            &e,
        )
        .unwrap_err();
        assert!(err.to_string().contains("verify-full"), "{err}");
        let err = Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "bogus")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("PGSSLMODE"), "{err}");
        let d = Dsn::parse(
            "host=h sslcert=/c.pem sslkey=/k.pem",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "disable")]),
        )
        .unwrap();
        assert_eq!(d.tls.check, tls::Check::None);
        assert_eq!(
            d.tls.client,
            Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem")))
        );
    }

    #[test]
    fn bad_values_are_named() {
        let e = BTreeMap::new();
        for (text, word) in [
            ("postgres://u:pw-secret@h:notaport/d", "port \"notaport\""),
            (
                "host=h port=5432 connect_timeout=soon password=pw-secret",
                "connect_timeout",
            ),
            (
                "host=h target_session_attrs=standby",
                "target_session_attrs",
            ),
            ("host=h hostaddr=not-an-ip", "hostaddr"),
            ("host=h sslmode=verify", "sslmode \"verify\""),
            ("host=h sslrootcrt=/x", "\"sslrootcrt\""),
            ("postgres://h/d?sslmdoe=require", "\"sslmdoe\""),
        ] {
            let err = Dsn::parse(text, DsnSource::Flag, &e)
                .unwrap_err()
                .to_string();
            assert!(err.contains(word), "{text}: {err}");
            assert!(!err.contains("pw-secret"), "{err}");
        }
        let err = Dsn::parse(
            "",
            DsnSource::LibpqEnv,
            &env(&[("PGPORT", "x"), ("PGPASSWORD", "pw-secret")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("(from PGPORT)"), "{err}");
    }

    #[test]
    fn session_settings_and_application_name() {
        let d = Dsn::parse(
            "host=h options='-c work_mem=64MB'",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        let opts = session_options(d.user_options.as_deref(), &NEWER_TIMEOUTS);
        assert!(
            opts.starts_with(
                "-c work_mem=64MB -c search_path=pg_catalog,pg_temp -c statement_timeout=30000"
            ),
            "{opts}"
        );
        // A DSN's own search_path comes first, so the pinned one (later) wins.
        let d = Dsn::parse(
            "host=h options='-c search_path=public'",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        let opts = session_options(d.user_options.as_deref(), &NEWER_TIMEOUTS);
        let pinned = opts.find("search_path=pg_catalog,pg_temp");
        assert!(pinned > opts.find("search_path=public"), "{opts}");
        assert!(
            opts.contains("idle_in_transaction_session_timeout="),
            "{opts}"
        );
        assert!(opts.ends_with("-c transaction_timeout=0"), "{opts}");
        assert_eq!(d.config.get_application_name(), Some(APPLICATION_NAME));
        let d = Dsn::parse("host=h", DsnSource::Flag, &env(&[("PGAPPNAME", "mine")])).unwrap();
        assert_eq!(d.config.get_application_name(), Some("mine"));
        let d = Dsn::parse(
            "host=h connect_timeout=1",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, Duration::from_secs(2));
        let d = Dsn::parse(
            "host=h connect_timeout=0",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, CONNECT_TIMEOUT);
        let d = Dsn::parse(
            "host=h",
            DsnSource::Flag,
            &env(&[("PGCONNECT_TIMEOUT", "5"), ("PGOPTIONS", "-c work_mem=1MB")]),
        )
        .unwrap();
        assert_eq!(d.connect_timeout, Duration::from_secs(5));
        assert_eq!(d.user_options.as_deref(), Some("-c work_mem=1MB"));
    }
}
