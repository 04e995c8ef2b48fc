//! The one door to PostgreSQL: DSN resolution, redaction, TLS, timeouts and a small pool.
//!
//! Every database connection the runner makes goes through [`Pg`]. It owns the single tokio
//! runtime of the run; libtest-mimic trials are synchronous closures on worker threads, so
//! they enter it with [`Pg::block_on`]. The DSN password never leaves this module: the only
//! printable form of a DSN is [`Dsn::redacted`], and every error message that could carry
//! server or parser text is passed through [`Dsn::scrub`] first.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config};

/// `application_name` of every runner connection (tests find the runner's backends by it).
pub const APPLICATION_NAME: &str = "awa-conformance";
/// How long one connection attempt may take before it is a connection error.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Server-side cap on one statement (set per connection).
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);
/// Client-side cap on one unit of database work (a trial's batch); a dead or stuck connection
/// surfaces as [`PgError::Timeout`] instead of hanging the run.
pub const WORK_TIMEOUT: Duration = Duration::from_secs(60);

/// Where the DSN came from (reported in provenance and in errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DsnSource {
    /// The `--dsn` option.
    Flag,
    /// The `DATABASE_URL` environment variable.
    DatabaseUrl,
    /// The libpq environment (`PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, ...).
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
    /// The DSN could not be parsed.
    #[error(
        "invalid DSN from {source_name}: {reason}; pass a postgres:// URL or key=value string"
    )]
    InvalidDsn {
        /// Where the DSN came from.
        source_name: &'static str,
        /// The parser's reason (scrubbed).
        reason: String,
    },
    /// The server could not be reached or refused the connection.
    #[error(
        "cannot connect to {dsn}: {reason}; check that the server is running and the DSN is right"
    )]
    Connect {
        /// The redacted DSN.
        dsn: String,
        /// Why (scrubbed).
        reason: String,
    },
    /// The TLS connector could not be built.
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
    verify_certs: bool,
    password: Option<String>,
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
        .strip_prefix("postgres://")
        .or_else(|| dsn.strip_prefix("postgresql://"))
    {
        let authority = rest.split(['/', '?']).next().unwrap_or("");
        let userinfo = authority.rsplit_once('@')?.0;
        let pass = userinfo.split_once(':')?.1;
        return (!pass.is_empty()).then(|| pass.to_owned());
    }
    let idx = dsn.find("password=")?;
    let after = dsn.get(idx + "password=".len()..)?;
    let pass = if let Some(quoted) = after.strip_prefix('\'') {
        quoted.split('\'').next().unwrap_or("")
    } else {
        after.split_whitespace().next().unwrap_or("")
    };
    (!pass.is_empty()).then(|| pass.to_owned())
}

fn scrub_with(text: &str, password: Option<&str>) -> String {
    match password {
        Some(p) if !p.is_empty() => text.replace(p, "***"),
        _ => text.to_owned(),
    }
}

impl Dsn {
    /// Resolve the DSN: `--dsn` > `DATABASE_URL` > libpq environment. `Ok(None)` when none
    /// is given (the caller may then start an embedded cluster).
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`] when the chosen DSN does not parse.
    pub fn resolve(flag: Option<&str>) -> Result<Option<Self>, PgError> {
        let env: BTreeMap<String, String> = std::env::vars()
            .filter(|(k, _)| k.starts_with("PG") || k == "DATABASE_URL")
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
        let libpq = ["PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGHOSTADDR"];
        if libpq.iter().any(|k| env_nonempty(env, k).is_some()) {
            return Self::parse("", DsnSource::LibpqEnv, env).map(Some);
        }
        Ok(None)
    }

    /// Parse a DSN string, filling unset fields from the libpq environment as libpq does.
    ///
    /// # Errors
    /// [`PgError::InvalidDsn`].
    pub fn parse(
        text: &str,
        source: DsnSource,
        env: &BTreeMap<String, String>,
    ) -> Result<Self, PgError> {
        let text_password = password_in_text(text);
        let invalid = |reason: String| PgError::InvalidDsn {
            source_name: source.as_str(),
            reason: scrub_with(&reason, text_password.as_deref()),
        };
        // tokio-postgres knows disable/prefer/require; libpq's verify-* modes mean "require,
        // and check the certificate", allow means prefer.
        let (mut text, mut verify_certs) = (text.to_owned(), false);
        for mode in ["verify-full", "verify-ca"] {
            if text.contains(&format!("sslmode={mode}")) {
                text = text.replace(&format!("sslmode={mode}"), "sslmode=require");
                verify_certs = true;
            }
        }
        text = text.replace("sslmode=allow", "sslmode=prefer");
        let mut config = if text.trim().is_empty() {
            Config::new()
        } else {
            text.parse::<Config>()
                .map_err(|e| invalid(format!("{e}")))?
        };
        if config.get_hosts().is_empty() {
            match env_nonempty(env, "PGHOST") {
                Some(h) => {
                    for part in h.split(',') {
                        if part.starts_with('/') {
                            config.host_path(part);
                        } else {
                            config.host(part);
                        }
                    }
                }
                None => {
                    config.host("localhost");
                }
            }
        }
        if config.get_ports().is_empty() {
            if let Some(p) = env_nonempty(env, "PGPORT") {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| invalid(format!("PGPORT {p:?} is not a port number")))?;
                config.port(port);
            }
        }
        if config.get_user().is_none() {
            let user = env_nonempty(env, "PGUSER")
                .or_else(|| env_nonempty(env, "USER"))
                .unwrap_or_else(|| "postgres".to_owned());
            config.user(user);
        }
        if config.get_dbname().is_none() {
            if let Some(db) = env_nonempty(env, "PGDATABASE") {
                config.dbname(db);
            }
        }
        if config.get_password().is_none() {
            if let Some(p) = env_nonempty(env, "PGPASSWORD") {
                config.password(p);
            }
        }
        if !text.contains("sslmode=") {
            match env_nonempty(env, "PGSSLMODE").as_deref() {
                Some("disable") => {
                    config.ssl_mode(SslMode::Disable);
                }
                Some("require") => {
                    config.ssl_mode(SslMode::Require);
                }
                Some("verify-ca" | "verify-full") => {
                    config.ssl_mode(SslMode::Require);
                    verify_certs = true;
                }
                Some("allow" | "prefer") | None => {}
                Some(other) => {
                    return Err(invalid(format!(
                        "PGSSLMODE {other:?} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                    )))
                }
            }
        }
        config.application_name(APPLICATION_NAME);
        config.connect_timeout(CONNECT_TIMEOUT);
        config.keepalives(true);
        config.keepalives_idle(Duration::from_secs(10));
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .or(text_password);
        Ok(Self {
            config,
            source,
            verify_certs,
            password,
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
            verify_certs: false,
            password: None,
        }
    }

    /// The same server and credentials as another login role (least-privilege suite).
    #[must_use]
    pub fn with_user(&self, user: &str, password: &str) -> Self {
        let mut d = self.clone();
        d.config.user(user).password(password);
        // Scrub both: the run's own password and the temporary role's.
        d.password = Some(password.to_owned());
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

    /// A printable form: `postgres://user@host:port/db?sslmode=...`, never the password.
    #[must_use]
    pub fn redacted(&self) -> String {
        let c = &self.config;
        let hosts: Vec<String> = c
            .get_hosts()
            .iter()
            .map(|h| match h {
                Host::Tcp(s) => s.clone(),
                Host::Unix(p) => p.display().to_string(),
            })
            .collect();
        let port = c
            .get_ports()
            .first()
            .map_or_else(|| "5432".to_owned(), u16::to_string);
        let pass = if self.password.is_some() { ":***" } else { "" };
        let mode = match (c.get_ssl_mode(), self.verify_certs) {
            (SslMode::Disable, _) => "disable",
            (SslMode::Require, true) => "verify-full",
            (SslMode::Require, false) => "require",
            _ => "prefer",
        };
        format!(
            "postgres://{}{pass}@{}:{port}/{}?sslmode={mode}",
            c.get_user().unwrap_or(""),
            hosts.join(","),
            c.get_dbname().unwrap_or(c.get_user().unwrap_or("")),
        )
    }

    /// Remove the password from any text (server or library messages).
    #[must_use]
    pub fn scrub(&self, text: &str) -> String {
        scrub_with(text, self.password.as_deref())
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

/// The TLS connector, built once per process and mode: loading the system trust store is
/// slow, and the race suite opens many connections at once.
fn tls_connector(verify: bool) -> Result<postgres_native_tls::MakeTlsConnector, String> {
    static NO_VERIFY: OnceLock<Result<postgres_native_tls::MakeTlsConnector, String>> =
        OnceLock::new();
    static VERIFY: OnceLock<Result<postgres_native_tls::MakeTlsConnector, String>> =
        OnceLock::new();
    let cell = if verify { &VERIFY } else { &NO_VERIFY };
    cell.get_or_init(|| {
        // libpq's `require` encrypts without checking the certificate; verify-* check it.
        native_tls::TlsConnector::builder()
            .danger_accept_invalid_certs(!verify)
            .danger_accept_invalid_hostnames(!verify)
            .build()
            .map(postgres_native_tls::MakeTlsConnector::new)
            .map_err(|e| e.to_string())
    })
    .clone()
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

    /// Open a new connection with `dsn` (TLS as the DSN asks) and set the session up.
    ///
    /// # Errors
    /// [`PgError::Connect`] or [`PgError::Tls`].
    pub async fn connect_with(dsn: &Dsn) -> Result<Client, PgError> {
        let connect_err = |reason: String| PgError::Connect {
            dsn: dsn.redacted(),
            reason,
        };
        let client = if dsn.config.get_ssl_mode() == SslMode::Disable {
            let (client, conn) =
                tokio::time::timeout(CONNECT_TIMEOUT, dsn.config.connect(tokio_postgres::NoTls))
                    .await
                    .map_err(|_| connect_err(format!("no answer within {CONNECT_TIMEOUT:?}")))?
                    .map_err(|e| connect_err(describe_error(dsn, &e)))?;
            tokio::spawn(conn);
            client
        } else {
            let tls = tls_connector(dsn.verify_certs).map_err(|e| PgError::Tls(dsn.scrub(&e)))?;
            let (client, conn) = tokio::time::timeout(CONNECT_TIMEOUT, dsn.config.connect(tls))
                .await
                .map_err(|_| connect_err(format!("no answer within {CONNECT_TIMEOUT:?}")))?
                .map_err(|e| connect_err(describe_error(dsn, &e)))?;
            tokio::spawn(conn);
            client
        };
        client
            .batch_execute(&format!(
                "SET statement_timeout = {}; SET lock_timeout = {}",
                STATEMENT_TIMEOUT.as_millis(),
                STATEMENT_TIMEOUT.as_millis()
            ))
            .await
            .map_err(|e| connect_err(describe_error(dsn, &e)))?;
        Ok(client)
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

impl From<PgError> for crate::error::Error {
    fn from(e: PgError) -> Self {
        match e {
            PgError::InvalidDsn { .. } => Self::Usage(e.to_string()),
            PgError::Connect { .. } | PgError::Tls(_) => Self::Connect {
                detail: e.to_string(),
            },
            PgError::Runtime(_) | PgError::Timeout(_) | PgError::Db(_) => Self::Harness {
                detail: e.to_string(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
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
        let d = Dsn::parse(
            "postgres://u@h/d?sslmode=verify-full",
            DsnSource::Flag,
            &BTreeMap::new(),
        )
        .unwrap();
        assert!(d.verify_certs);
        assert_eq!(d.config.get_ssl_mode(), SslMode::Require);
        let d = Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "require")]),
        )
        .unwrap();
        assert_eq!(d.config.get_ssl_mode(), SslMode::Require);
        assert!(!d.verify_certs);
        assert!(Dsn::parse(
            "postgres://u@h/d",
            DsnSource::Flag,
            &env(&[("PGSSLMODE", "bogus")])
        )
        .is_err());
    }
}
