//! The live-database suites (`sql::<suite>::<case>`): the contract exercised through PostgreSQL.
//!
//! # How the CLI drives this module
//!
//! 1. Resolve a DSN with [`crate::pg::Dsn::resolve`] (or start [`crate::embedded`] and install
//!    the reference schema with [`crate::schema_install`]), then build the door with
//!    [`crate::pg::Pg::new`].
//! 2. Call [`crate::contract::open::preflight`]: it connects and checks the catalog.
//! 3. Call [`trials`] with `Some(setup)` (or `None` with a reason when there is no database:
//!    every case is then listed as ignored, never passed) and run them with libtest-mimic.
//! 4. Call [`DbSetup::cleanup`] after the run (sweeps anything the committing suites left
//!    behind, by run id; each suite already cleans up after itself).
//!
//! What a case sends, expects and how it is judged comes from [`crate::contract`]; a suite
//! only says which requests to send and in what order.
//!
//! # Isolation
//!
//! Every case runs in a transaction that is rolled back, on a pooled connection. Only the
//! race and least-privilege suites must commit; they use run-scoped queue names
//! (`awa_conformance_<run id>_…`), remove their rows afterwards, and drop their role. A run
//! holds an advisory lock keyed by its run id for its whole life; at startup (after
//! preflight) it sweeps the rows and login roles of run ids whose lock is held in no database
//! of the cluster, i.e. of runs that were killed before they could clean up ([`crate::contract::sweep`]).

mod bulk;
mod case;
mod catalog;
pub mod compat;
mod field;
mod function;
mod lifecycle;
mod payload;
mod privilege;
mod race;
mod rejection;
mod request;
mod revision;
mod rotor;
mod uniqueness;
mod width;

use std::sync::Arc;

use awa_conformance_vectors::VectorSet;
use libtest_mimic::Trial;

use crate::contract::features::Side;
use crate::contract::target::DbSetup;
use crate::contract::{levels, sweep};
use crate::outcome::RunContext;

/// The `suite` string every DB trial records.
pub const SUITE: &str = crate::contract::features::DATABASE_SUITE;

/// Every DB trial, for the routing and unique_key vectors of `vectors` plus the fixed
/// suites. With `db = None` every case is listed as ignored with `no_db_reason`
/// (shown, never counted as passed).
#[must_use]
pub fn trials(
    ctx: &Arc<RunContext>,
    db: Option<&Arc<DbSetup>>,
    no_db_reason: &str,
    vectors: &VectorSet,
) -> Vec<Trial> {
    let cases = contract_cases(vectors);
    // The compat cases run only on released Awa (listed always, so names and filters work
    // without a database); there, the contract's own cases do not apply.
    let released = db.and_then(|d| d.compat.as_ref());
    let compat_cases = match db {
        Some(d) if d.compat.is_none() => Vec::new(),
        _ => compat::cases(vectors),
    };
    // Every case's database features, whether or not a filter selects it: the catalogue the
    // database side's per-feature verdict counts against (docs/contract.md §12.3). Released
    // Awa is judged on the compat cases alone, a contract database on the contract's; without
    // a database (a listing, or no DSN) nothing is judged and nothing is declared.
    let judged: &[case::Case] = match (db, released) {
        (None, _) => &[],
        (Some(_), Some(_)) => &compat_cases,
        (Some(_), None) => &cases,
    };
    for case in judged {
        ctx.declare_features(Side::Database, &case.name, case.features.clone());
    }
    cases
        .into_iter()
        .map(|case| match released {
            Some(r) => {
                let reason = r.contract_case_reason(&case.requires);
                ctx.not_applicable(SUITE, case.name, reason)
            }
            None => case::to_trial(ctx, db, no_db_reason, case),
        })
        .chain(
            compat_cases
                .into_iter()
                .map(|case| case::to_trial(ctx, db, no_db_reason, case)),
        )
        .collect()
}

/// The contract's own cases (every suite but `compat`).
fn contract_cases(vectors: &VectorSet) -> Vec<case::Case> {
    [
        catalog::cases(),
        function::cases(vectors),
        rejection::cases(),
        uniqueness::cases(),
        rotor::cases(),
        width::cases(),
        race::cases(),
        privilege::cases(vectors),
        lifecycle::cases(),
        revision::cases(),
        bulk::cases(),
        payload::cases(vectors),
        field::cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::features::Feature;

    /// The rule of docs/contract.md §12.3 for the database side: every case counts for a
    /// feature, and a case a database may leave out (it needs an optional capability) counts
    /// for that capability's optional feature only, so leaving it out never costs the core.
    #[test]
    fn every_case_checks_a_feature_and_an_optional_case_never_counts_against_the_core() {
        let set = awa_conformance_vectors::embedded().unwrap_or_else(|e| panic!("{e}"));
        let all: Vec<case::Case> = contract_cases(&set)
            .into_iter()
            .chain(compat::cases(&set))
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for case in &all {
            assert!(!case.features.is_empty(), "{} checks no feature", case.name);
            let optional: Vec<Feature> = case
                .requires
                .iter()
                .filter_map(|c| levels::feature_of(c))
                .collect();
            if let Some(last) = optional.last() {
                assert_eq!(case.features, vec![*last], "{}", case.name);
            }
            seen.extend(case.features.iter().copied());
        }
        // Every feature a database has a case of (partitions: released Awa's compat cases).
        for f in Feature::ALL {
            assert!(seen.contains(&f), "no sql:: case checks {}", f.id());
        }
    }
}
