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
//!
//! Its submodules, bottom-up (each uses only those before it, and this file's constants and
//! [`PgError`]):
//!
//! 1. `ident.rs`: quoting identifiers ([`quote_ident`]), the checked [`SchemaName`] and the
//!    placeholder rule of the kit's SQL files ([`SqlText`]);
//! 2. `session.rs`: what every session pins at startup ([`SESSION_SEARCH_PATH`],
//!    [`SESSION_SETTINGS`], the timeouts);
//! 3. [`conninfo.rs`](conninfo): libpq's settings, merged from the DSN, the service file, the
//!    environment and the password file;
//! 4. [`tls.rs`](tls): libpq's `sslmode` through rustls;
//! 5. `config.rs`: those settings as the driver's config and the TLS settings;
//! 6. `dsn.rs`: the [`Dsn`], resolved, redacted and handed on;
//! 7. `statements.rs`: the statement cache of a connection ([`Statements`], [`Cached`]).
//!
//! This file is the door itself: [`Pg`] (the runtime, connecting, the pool of
//! [`PooledClient`]s), the errors ([`PgError`], [`describe_error`]) and the timeouts.

mod config;
pub mod conninfo;
mod dsn;
mod ident;
mod session;
mod statements;
pub mod tls;

pub use dsn::{Dsn, DsnSource};
pub use ident::{quote_ident, SchemaName, SqlText, MAX_IDENTIFIER_BYTES};
pub use session::{SESSION_SEARCH_PATH, SESSION_SETTINGS};
pub use statements::{Cached, Statements};

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_postgres::config::SslMode;
use tokio_postgres::{Client, Config};

use session::session_options;

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
    /// startup options. A server that does not know one of
    /// [`NEWER_TIMEOUTS`](session::NEWER_TIMEOUTS) refuses the session (42704); the runner then
    /// retries without it and remembers that for the DSN.
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

/// The environment map the DSN resolution reads (`PG*`, `HOME`, ...), for the tests of this
/// module's files.
#[cfg(test)]
pub(crate) fn test_env(pairs: &[(&str, &str)]) -> std::collections::BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
