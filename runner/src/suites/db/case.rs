//! How a DB case becomes a trial and talks to the database: the case and its trial, the
//! rolled-back transaction every case runs in, and which errors blame the harness rather than
//! the implementation.

use std::sync::Arc;

use libtest_mimic::Trial;
use tokio_postgres::Client;

use super::SUITE;
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, RunContext, Verdict};
use crate::pg::{Pg, PgError};

/// The check of one DB case.
pub(super) type Check = Box<dyn FnOnce(Arc<DbSetup>) -> Result<Verdict, CaseFailure> + Send>;

/// One DB case before it becomes a trial.
pub(super) struct Case {
    /// Full trial name, `sql::<suite>::<case>`.
    pub(super) name: String,
    /// Capabilities (`contract_capabilities()`) the case needs. A missing optional one makes
    /// the case not applicable; mandatory ones ([`super::levels::CORE`]) never do.
    pub(super) requires: Vec<String>,
    /// The check.
    pub(super) check: Check,
}

impl Case {
    /// A case named `sql::<suite>::<case>`.
    pub(super) fn new(
        suite: &str,
        case: &str,
        check: impl FnOnce(Arc<DbSetup>) -> Result<Verdict, CaseFailure> + Send + 'static,
    ) -> Self {
        Self {
            name: format!("{SUITE}::{suite}::{case}"),
            requires: Vec::new(),
            check: Box::new(check),
        }
    }

    /// Require a capability.
    pub(super) fn requires(mut self, capability: &str) -> Self {
        self.requires.push(capability.to_owned());
        self
    }
}

/// Turn a case into a trial: ignored without a database, not applicable when a required
/// optional capability is missing, otherwise run. A mandatory capability missing from the
/// list does not excuse a case: it runs, and `sql::catalog::core_capabilities` fails.
pub(super) fn to_trial(
    ctx: &Arc<RunContext>,
    db: Option<&Arc<DbSetup>>,
    no_db_reason: &str,
    case: Case,
) -> Trial {
    let Some(db) = db else {
        return ctx.ignored(SUITE, case.name, no_db_reason.to_owned());
    };
    let missing: Vec<&String> = case
        .requires
        .iter()
        .filter(|c| !crate::contract::levels::is_core(c) && !db.capabilities.contains(c))
        .collect();
    if !missing.is_empty() {
        let reason = format!(
            "{}.contract_capabilities() lacks {}",
            db.schema,
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ctx.not_applicable(SUITE, case.name, reason);
    }
    let db = Arc::clone(db);
    let check = case.check;
    ctx.trial_with(SUITE, case.name, move || check(db))
}

/// A database error where the harness, not the implementation, is at fault.
pub(super) fn harness(e: PgError) -> CaseFailure {
    CaseFailure::harness(e.to_string())
}

pub(super) use crate::contract::judge::{is_harness_error, query_fail};

/// A failing step of the harness's own setup (not of the contract function).
pub(super) fn setup_fail(db: &DbSetup, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
    CaseFailure::harness(format!("{what}: {}", db.pg.describe(e)))
}

/// Run `f` on a pooled connection inside a transaction that is always rolled back.
pub(super) fn rolled_back<T>(
    db: &Arc<DbSetup>,
    f: impl AsyncFnOnce(&Client) -> Result<T, CaseFailure>,
) -> Result<T, CaseFailure> {
    rolled_back_on(&db.pg, db, f)
}

/// Run `f` on a pooled connection of `pg` (the run's pool, or the producer role's) inside a
/// transaction that is always rolled back.
pub(super) fn rolled_back_on<T>(
    pg: &Arc<Pg>,
    db: &DbSetup,
    f: impl AsyncFnOnce(&Client) -> Result<T, CaseFailure>,
) -> Result<T, CaseFailure> {
    pg.block_on(async {
        let mut pooled = pg.pooled().await.map_err(harness)?;
        let client = pooled.get().map_err(harness)?;
        // Every call in the case is made as a producer's session would make it
        // (docs/contract.md §12.4); ROLLBACK ends the SET LOCALs with the transaction.
        let begin = match db.caller_settings_local() {
            Some(settings) => format!("BEGIN; {settings}"),
            None => "BEGIN".to_owned(),
        };
        client
            .batch_execute(&begin)
            .await
            .map_err(|e| query_fail(db, "BEGIN", &e))?;
        let out = f(client).await;
        // A connection that cannot roll back is not returned to the pool.
        client
            .batch_execute("ROLLBACK")
            .await
            .map_err(|e| query_fail(db, "ROLLBACK", &e))?;
        pooled.mark_clean();
        out
    })
    .map_err(harness)?
}
