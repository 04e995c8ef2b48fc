//! The database under test: the checked session every engine shares (the door, the schema,
//! the producer role, the run id, what preflight read), preflight itself (environment,
//! catalog, released-Awa detection), the run's login role and the sweep of what a run
//! committed.
//!
//! This is the bottom of the contract layer ([`crate::contract`]): the SQL suites, the
//! producer engine, fuzz and the compat suites all receive a [`DbSetup`] from here, and none
//! of them owns it.

use std::sync::Arc;

use crate::outcome::{
    RunContext, PROVENANCE_CONTRACT_VERSION, PROVENANCE_LEVEL, PROVENANCE_SERVER_VERSION,
};
use crate::pg::{Pg, PgError, SchemaName};

use super::{environment, levels, login, preflight as catalog, released, sweep};

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
    /// `contract_capabilities()` as read at preflight.
    pub capabilities: Vec<String>,
    /// `contract_version()`.
    pub contract_version: i32,
    /// `SHOW server_version`.
    pub server_version: String,
    /// Released Awa (no `insert_job`): the compat profile runs instead of the contract's cases.
    pub compat: Option<released::Released>,
    /// The least-privilege login role's door, set up by the first case that needs it.
    pub(super) producer: std::sync::Mutex<Option<login::Producer>>,
    /// A session holding this run's advisory lock: while it lives, the leftovers sweep of
    /// concurrent runs leaves this run's rows and role alone.
    pub(super) liveness: Option<tokio_postgres::Client>,
}

impl DbSetup {
    /// The prefix of every run-scoped name (queues, roles).
    #[must_use]
    pub fn prefix(&self) -> String {
        format!("awa_conformance_{}", self.run_id)
    }

    /// Remove everything this run committed (rows of run-scoped queues, their claims, the
    /// temporary role). Idempotent; the committing suites already do this themselves.
    ///
    /// # Errors
    /// [`PgError`] when the sweep could not run.
    pub fn cleanup(&self) -> Result<(), PgError> {
        // Close the login role's sessions before its role is dropped.
        if let Ok(mut slot) = self.producer.lock() {
            drop(slot.take());
        }
        self.pg.block_on(sweep::sweep(
            self,
            &self.prefix(),
            &[],
            Some(&login::role_name(self)),
        ))?
    }
}

impl DbSetup {
    /// Remove the committed rows of queues named `scope…` (and the claims of their jobs) on
    /// `client`: what one producer case created ([`crate::producer`]).
    ///
    /// # Errors
    /// [`PgError`] when the sweep could not run.
    pub async fn sweep_scope_on(
        &self,
        client: &tokio_postgres::Client,
        scope: &str,
    ) -> Result<(), PgError> {
        sweep::sweep_on(client, self, scope, &[], sweep::ByLogin::default(), None).await
    }

    /// The run's temporary login role (`awa_conformance_<run>_login`, a member of the producer
    /// role only; created by the first caller), its password (for a producer's environment
    /// only: never print it) and the door's connection string that logs in as it. `Err` says
    /// why there is none here (no CREATEROLE, no producer role, pg_hba.conf).
    ///
    /// # Errors
    /// The reason, as the least-privilege suite reports it.
    pub fn run_login(&self) -> Result<RunLogin, String> {
        match login::producer(self) {
            login::Producer::Ready(pg, password) => Ok(RunLogin {
                role: login::role_name(self),
                password: password.to_string(),
                conninfo: pg.dsn().conninfo(),
            }),
            login::Producer::NotApplicable(why) | login::Producer::Broken(why) => Err(why),
        }
    }

    /// [`Self::sweep_scope_on`], and the rows `by_login` finds wherever they landed (ADR
    /// 0049): what a producer case wrote outside its queues.
    ///
    /// # Errors
    /// [`PgError`] when the sweep could not run.
    pub async fn sweep_case_on(
        &self,
        client: &tokio_postgres::Client,
        scope: &str,
        by_login: sweep::ByLogin<'_>,
    ) -> Result<(), PgError> {
        sweep::sweep_on(client, self, scope, &[], by_login, None).await
    }

    /// How many committed rows of the schema's tables have a queue named `scope…` (a rejected
    /// bulk batch must leave none), on `client`.
    ///
    /// # Errors
    /// [`PgError`] when the count could not run.
    pub async fn count_scope_rows_on(
        &self,
        client: &tokio_postgres::Client,
        scope: &str,
    ) -> Result<i64, PgError> {
        sweep::count_scope_rows(client, self, scope).await
    }
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
    Environment(environment::EnvironmentError),
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

/// Connect and check the contract schema: the schema exists, exactly one
/// `<schema>.insert_job` with the v1 signature (last argument `p_opts jsonb`), `job_routing`,
/// `contract_version() = 1` and `contract_capabilities()`. Records server and contract
/// versions as provenance.
///
/// Before that, [`environment::check`] makes sure the database can host a run at all.
///
/// # Errors
/// [`PreflightError::Unreachable`], [`PreflightError::Environment`] or
/// [`PreflightError::Schema`] with one clear line.
pub fn preflight(
    ctx: &Arc<RunContext>,
    pg: Arc<Pg>,
    schema: &SchemaName,
    producer_role: &str,
    test_threads: Option<usize>,
    producer: bool,
) -> Result<Arc<DbSetup>, PreflightError> {
    let threads = environment::test_threads(test_threads);
    pg.block_on(environment::check(
        &pg,
        schema,
        producer_role,
        threads,
        producer,
    ))?
    .map_err(|e| match e {
        environment::EnvironmentError::Pg(p) => PreflightError::Unreachable(p),
        other => PreflightError::Environment(other),
    })?;
    let mut setup = pg.block_on(catalog::preflight(&pg, schema, producer_role))??;
    let (live, swept) = pg.block_on(sweep::mark_alive_and_sweep(&setup))??;
    setup.liveness = Some(live);
    if let Err(e) = swept {
        // Leftovers of earlier runs are untidy but say nothing about conformance: warn only.
        use std::io::Write;
        let e = crate::report::redact::redact_secrets(&e.to_string());
        let _ = writeln!(
            std::io::stderr(),
            "awa-conformance: warning: sweeping leftovers of earlier killed runs failed: {e}"
        );
    }
    ctx.set_provenance(PROVENANCE_SERVER_VERSION, setup.server_version.clone());
    if let Some(released) = &setup.compat {
        ctx.set_provenance(
            PROVENANCE_CONTRACT_VERSION,
            format!(
                "none (released Awa, schema version {})",
                released.schema_version
            ),
        );
        ctx.set_provenance(PROVENANCE_LEVEL, "compat".to_owned());
        ctx.set_provenance("released_awa", released.describe());
    } else {
        ctx.set_provenance(
            PROVENANCE_CONTRACT_VERSION,
            setup.contract_version.to_string(),
        );
        ctx.set_provenance(PROVENANCE_LEVEL, levels::level(&setup.capabilities));
    }
    Ok(Arc::new(setup))
}
