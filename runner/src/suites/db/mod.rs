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

use crate::contract::target::DbSetup;
use crate::contract::{levels, sweep};
use crate::outcome::RunContext;

/// The `suite` string every DB trial records.
pub const SUITE: &str = "sql";

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
    let cases: Vec<case::Case> = [
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
    .collect();
    // The compat cases run only on released Awa (listed always, so names and filters work
    // without a database); there, the contract's own cases do not apply.
    let released = db.and_then(|d| d.compat.as_ref());
    let compat_cases = match db {
        Some(d) if d.compat.is_none() => Vec::new(),
        _ => compat::cases(vectors),
    };
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
