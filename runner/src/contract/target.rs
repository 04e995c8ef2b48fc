//! The database under test: the checked session every engine shares (the door, the schema,
//! the producer role, the run id, what preflight read) and why preflight refuses a database.
//!
//! The bottom of the contract layer ([`crate::contract`]): [`crate::contract::open`] builds a
//! [`DbSetup`]; the sweep ([`crate::contract::sweep`]) and the run's login role
//! ([`crate::contract::login`]) add their methods to it; the SQL suites, the producer
//! engine, fuzz and the compat suites all receive one, and none of them owns it.

use std::sync::Arc;

use crate::pg::{Pg, PgError, SchemaName};

use super::environment::EnvironmentError;
use super::released::Released;
use crate::outcome::CaseFailure;
use crate::pg::quote_ident;

/// The capability that marks contract revision 1.1, which this kit tests (ADR 0025).
pub const CONTRACT_REVISION_CAPABILITY: &str = "contract_1_1";

/// The run's temporary login role, as [`DbSetup::run_login`] gives it.
pub struct RunLogin {
    /// The role name (unquoted).
    pub role: String,
    /// Its random password (hex).
    pub password: String,
    /// A libpq key=value string logging in as it (server and TLS mode of the run's DSN).
    pub conninfo: String,
}

impl std::fmt::Debug for RunLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLogin")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// The shared login-role connection door, created once per run.
#[derive(Debug, Clone)]
pub enum Producer {
    /// Logged in as the temporary role (a pool of its own), and its password (for a
    /// producer's DSN, ADR 0049; never printed).
    Ready(Arc<Pg>, Arc<str>),
    /// The role cannot be created or cannot log in here (not applicable, with the reason).
    NotApplicable(String),
    /// The setup itself failed (harness error).
    Broken(String),
}

/// A checked database ready for the DB suites.
#[derive(Debug)]
pub struct DbSetup {
    /// The door (runtime, DSN, pool).
    pub pg: Arc<Pg>,
    /// The contract schema (checked at the command line, quoted once).
    pub schema: SchemaName,
    /// The producer role name (unquoted), for the least-privilege suite.
    pub producer_role: String,
    /// A random id naming everything this run creates (`awa_conformance_<run_id>…`).
    pub run_id: String,
    /// The first transaction id (xid8, as bigint) not yet assigned when the run began: a row
    /// version written by a transaction at or after it was written during the run. The sweep
    /// removes a job found only by an answered id when its row was written since then, so a
    /// job that existed before the run is never removed ([`super::sweep::ByLogin`]).
    /// `i64::MAX` until [`super::sweep::mark_alive_and_sweep`] reads it: nothing qualifies.
    pub began: i64,
    /// `contract_capabilities()` as read at preflight.
    pub capabilities: Vec<String>,
    /// `contract_version()`.
    pub contract_version: i32,
    /// `SHOW server_version`.
    pub server_version: String,
    /// Released Awa (no `insert_job`): the compat profile runs instead of the contract's cases.
    pub compat: Option<Released>,
    /// The least-privilege login role's door, set up by the first case that needs it.
    pub(super) producer: std::sync::Mutex<Option<Producer>>,
    /// The producer's sessions and the suites' calls keep the server's defaults instead of
    /// [`CALLER_SETTINGS`] (`--plain-sessions`).
    pub plain_sessions: std::sync::atomic::AtomicBool,
    /// A session holding this run's advisory lock: while it lives, the leftovers sweep of
    /// concurrent runs leaves this run's rows and role alone.
    pub(super) liveness: Option<tokio_postgres::Client>,
}

/// The settings the calls of the functions under test are made with, by the producer's
/// sessions (the run's login starts with them) and by the SQL suites (`SET LOCAL` in each
/// case's transaction), so a stored value that depends on the caller's session fails
/// (docs/contract.md §12.4): a time zone 5 h 45 min from UTC (not a whole hour, so an
/// hour-rounding fix does not hide it), dates day first, intervals in ISO 8601. The runner's
/// own reads write every value they compare in an explicit form (`to_char … AT TIME ZONE
/// 'UTC'`), so they are unaffected; its sessions otherwise pin `pg::SESSION_SETTINGS`.
pub const CALLER_SETTINGS: [(&str, &str); 3] = [
    ("TimeZone", "Asia/Kathmandu"),
    ("DateStyle", "SQL, DMY"),
    ("IntervalStyle", "iso_8601"),
];

/// The `SET LOCAL` statements that put a transaction under [`CALLER_SETTINGS`] (the SQL
/// suites' cases and fuzz's batches run their calls in one).
#[must_use]
pub fn caller_settings_sql() -> String {
    // Constants of the kit, ASCII, with no quote in them: literals are safe here.
    CALLER_SETTINGS
        .iter()
        .map(|(name, value)| format!("SET LOCAL {name} TO '{value}'"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The provenance key naming the settings the suites' calls were made with (docs/contract.md
/// §12.4); the CLI and the Python bindings record it.
pub const CALLERS_PROVENANCE: &str = "caller_session";

/// [`CALLER_SETTINGS`] in libpq's `options` syntax (`-c TimeZone=Asia/Kathmandu ...`, a space
/// inside a value escaped with a backslash).
#[must_use]
pub fn caller_settings_options() -> String {
    CALLER_SETTINGS
        .iter()
        .map(|(name, value)| format!("-c {name}={}", value.replace(' ', "\\ ")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `dsn` as a `postgresql://` URL whose sessions start under [`CALLER_SETTINGS`]: what a
/// producer that opens its own connection (the Python bindings' insert callable) connects
/// with to be checked as the CLI checks a producer process (docs/contract.md §12.4).
#[must_use]
pub fn caller_session_url(dsn: &crate::pg::Dsn) -> String {
    dsn.with_options(&caller_settings_options()).url()
}

/// The provenance value naming the settings calls were made with: `plain` for
/// `--plain-sessions`.
#[must_use]
pub fn caller_settings_named(plain: bool) -> String {
    if plain {
        return plain_sessions_named("--plain-sessions");
    }
    CALLER_SETTINGS
        .iter()
        .map(|(name, value)| format!("{name}={value}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The provenance value for calls that keep the server's defaults, naming the switch that
/// asked for it (the CLI's `--plain-sessions`, the bindings' `plain_sessions=True`).
#[must_use]
pub fn plain_sessions_named(switch: &str) -> String {
    format!("the server's defaults ({switch})")
}

impl DbSetup {
    /// Whether calls keep the server's defaults (`--plain-sessions`).
    #[must_use]
    pub fn plain(&self) -> bool {
        self.plain_sessions
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The `SET LOCAL` statements that put a suite's transaction under [`CALLER_SETTINGS`];
    /// `None` with `--plain-sessions`, and on released Awa, whose functions are ground truth
    /// as released and are checked as their producers call them.
    #[must_use]
    pub fn caller_settings_local(&self) -> Option<String> {
        if self.plain() || self.compat.is_some() {
            return None;
        }
        Some(caller_settings_sql())
    }

    /// The provenance value naming the settings the calls were made with.
    #[must_use]
    pub fn caller_settings_provenance(&self) -> String {
        caller_settings_named(self.plain())
    }

    /// The prefix of every run-scoped name (queues, roles).
    #[must_use]
    pub fn prefix(&self) -> String {
        format!("awa_conformance_{}", self.run_id)
    }

    /// Whether `contract_capabilities()` listed `capability` at preflight.
    #[must_use]
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// The released setup of a compat case (the trials are built only for released Awa).
    ///
    /// # Errors
    /// A harness error on a database that is not released Awa.
    pub fn released(&self) -> Result<&Released, CaseFailure> {
        self.compat.as_ref().ok_or_else(|| {
            CaseFailure::harness("a compat case ran on a database that is not released Awa")
        })
    }

    /// The quoted queue-storage schema of released Awa, where a job's enqueue shard is kept,
    /// or the reason the cases that read one do not apply (naming the version: 0.5.x has no
    /// queue storage at all, 0.6.x keeps none on the canonical engine).
    ///
    /// # Errors
    /// A harness error on a database that is not released Awa.
    pub fn storage(&self) -> Result<Result<String, String>, CaseFailure> {
        let rel = self.released()?;
        if let Some(why) = rel.no_enqueue_shard(self.schema.as_str()) {
            return Ok(Err(why));
        }
        Ok(rel
            .storage_schema
            .as_deref()
            .map(quote_ident)
            .ok_or_else(|| "released Awa keeps no queue storage".to_owned()))
    }

    /// Where released Awa keeps a job it has not yet run, for the cases that read a stored
    /// unique key and claim (every version with `insert_job_compat` keeps both, on either
    /// engine).
    ///
    /// # Errors
    /// A harness error on a database that is not released Awa.
    pub fn stored_in(&self) -> Result<StoredIn, CaseFailure> {
        let rel = self.released()?;
        Ok(match rel.storage_schema.as_deref() {
            Some(q) => StoredIn::QueueStorage(quote_ident(q)),
            None => StoredIn::Canonical,
        })
    }
}

/// Where released Awa keeps a job before a worker claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredIn {
    /// Queue storage (0.6.x, activated): `ready_entries` and `deferred_jobs` of this quoted
    /// schema.
    QueueStorage(String),
    /// The canonical engine (0.5.x; 0.6.x before activation): `jobs_hot` and `scheduled_jobs`
    /// of the contract schema.
    Canonical,
}

/// Why the DB suites cannot run at all.
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// The database cannot be reached (exit 4).
    #[error(transparent)]
    Unreachable(#[from] PgError),
    /// The contract schema is missing or wrong (exit 5); the message names the fix.
    #[error("{0}")]
    Schema(String),
    /// The database cannot host a run: read-only, missing privileges, too few connections
    /// (exit 4); the message names the fix.
    #[error(transparent)]
    Environment(EnvironmentError),
}

impl From<PreflightError> for crate::error::Error {
    fn from(e: PreflightError) -> Self {
        use crate::error::Kind;
        match e {
            PreflightError::Unreachable(p) => p.into(),
            PreflightError::Schema(_) => Self::caused(Kind::Schema, e),
            PreflightError::Environment(_) => Self::caused(Kind::DatabaseSetup, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_settings_as_options_escape_the_space_in_a_value() {
        // libpq splits `options` on unescaped spaces: "SQL, DMY" must stay one value.
        assert_eq!(
            caller_settings_options(),
            "-c TimeZone=Asia/Kathmandu -c DateStyle=SQL,\\ DMY -c IntervalStyle=iso_8601"
        );
    }
}
