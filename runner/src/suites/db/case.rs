//! How a DB case becomes a trial and talks to the database: the case and its trial, the
//! rolled-back transaction every case runs in, and which errors blame the harness rather than
//! the implementation.

use std::sync::Arc;

use libtest_mimic::Trial;
use tokio_postgres::Client;

use super::SUITE;
use crate::contract::features::Feature;
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
    /// The database features the case checks (docs/contract.md §12.3): its suite's
    /// ([`suite_features`]), or the optional level's feature once it requires an optional
    /// capability, so a case a database may leave out never counts against its core.
    pub(super) features: Vec<Feature>,
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
            features: suite_features(suite).to_vec(),
            check: Box::new(check),
        }
    }

    /// Require a capability. An optional one makes the case its level's feature.
    pub(super) fn requires(mut self, capability: &str) -> Self {
        self.requires.push(capability.to_owned());
        if let Some(feature) = crate::contract::levels::feature_of(capability) {
            self.features = vec![feature];
        }
        self
    }

    /// Name the features the case checks when its suite's are not the right ones (call before
    /// [`Case::requires`], which has the last word for an optional capability).
    pub(super) fn checks(mut self, features: &[Feature]) -> Self {
        self.features = features.to_vec();
        self
    }
}

/// The features a case of `suite` checks unless it says otherwise: the one table from the
/// database's suites to docs/contract.md §12.3's features. A vector's case names its
/// family's feature ([`Feature::of_vector`]), as an adapter's does.
fn suite_features(suite: &str) -> &'static [Feature] {
    use Feature as F;
    match suite {
        "catalog" | "privilege" => &[F::Catalog],
        "rejection" | "v1_1" | "field" => &[F::Refusals],
        "uniqueness" | "race" | "compat::claims" | "compat::unique" => &[F::Uniqueness],
        "rotor" => &[F::Precedence],
        // A shard is a key's hash modulo the queue's width, looked up by name.
        "width" => &[F::OrderingKey, F::ConcurrencyKey],
        "lifecycle" => &[F::MoveShard],
        "bulk" => &[F::Bulk],
        "payload" => &[F::Payload],
        "compat::ordering" => &[F::OrderingKey],
        "compat::partitioned" => &[F::Partitions],
        "compat::validation" => &[F::Refusals],
        // `function` cases name their vector's feature; a suite not listed here has none,
        // which `every_case_checks_a_feature` refuses.
        _ => &[],
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
