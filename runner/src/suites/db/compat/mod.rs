//! The compat profile: released Awa checked as it is, installing nothing.
//!
//! Released Awa has `insert_job_compat` and no `insert_job` (docs/released-awa.md). Instead of
//! stopping such a database at preflight (exit 5), the runner recognises it
//! ([`crate::contract::released`]: a `schema_version` table, no `insert_job`) and runs the
//! `sql::compat::*` cases, which check what released Awa shares with the contract, as far as the
//! release's schema version expresses it (docs/released-awa.md R8):
//!
//! * `ordering::w<width>`: every ordering_shard vector at every width 1..=64 through
//!   `insert_job_compat`, on a run-scoped queue whose width is set in `queue_meta`; the shard is
//!   read back from queue storage (`ready_entries.enqueue_shard`). 0.6.x with queue storage
//!   active only: 0.5.x takes no ordering key and keeps no shard;
//! * `unique::<id>`: every unique_key vector's key stored byte-exact, with its claim (every
//!   version, either engine: read back from queue storage, or from `jobs_hot` and
//!   `scheduled_jobs` on the canonical engine);
//! * `claims::<id>`: every mask: a second insert with the same key is refused with 23505
//!   on `idx_awa_jobs_unique` exactly when the first job's initial state (available, then
//!   scheduled) is in the mask (every version, either engine);
//! * `validation::*`: the released validation SQLSTATEs and messages the contract copies; on
//!   0.5.x, whose CHECK constraints do the validating, the SQLSTATE and the constraint at each
//!   bound, and the order cases are not applicable;
//! * `partitioned::<id>`: every partition vector's physical queue takes the job with its key's
//!   ordering shard (as `ordering`).
//!
//! Every case runs in a transaction that is rolled back: the run commits nothing, so the
//! database is left as found (row counts of every table; only sequence values, which
//! PostgreSQL never rolls back, move on). The contract's own `sql::*` cases are reported
//! not applicable, each with the reason (released Awa has no concurrency key, no route source,
//! no `job_routing`). A case the version cannot express is not applicable with a reason that
//! names the version.

mod routing;
mod unique;
mod validation;

use crate::pg::SqlText;
use std::sync::Arc;

use awa_conformance_vectors::VectorSet;
use tokio_postgres::Client;

use super::case::{query_fail, Case};
use crate::contract::call::{compat_insert, compat_insert_sql, CompatCall, CompatReturned};

use crate::contract::target::{DbSetup, StoredIn};
use crate::outcome::{CaseFailure, Verdict};

/// The suite prefix of every compat case (`sql::compat::<group>::<case>`). Group names never
/// end in a vector family's name, so a family filter such as `unique_key::` keeps selecting
/// the offline cases only.
const SUITE: &str = "compat";

/// Every compat case (names are the same with or without a database).
pub(super) fn cases(vectors: &VectorSet) -> Vec<Case> {
    [
        routing::ordering_cases(vectors),
        unique::unique_key_cases(vectors),
        unique::unique_states_cases(vectors),
        validation::cases(),
        routing::partition_cases(vectors),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// A case of this suite: `sql::compat::<group>::<case>`.
fn case(
    group: &str,
    name: &str,
    check: impl FnOnce(Arc<DbSetup>) -> Result<Verdict, CaseFailure> + Send + 'static,
) -> Case {
    Case::new(&format!("{SUITE}::{group}"), name, check)
}

/// The kind of every job the compat cases insert.
const KIND: &str = "awa_conformance.compat";

/// An `available` job with released defaults on `queue`.
fn call(queue: &str) -> CompatCall {
    CompatCall::new(KIND, queue)
}

/// Where queue storage keeps a job.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stored {
    queue: String,
    /// `ready` or `deferred`.
    place: String,
    enqueue_shard: Option<i16>,
    unique_key: Option<Vec<u8>>,
    unique_states: Option<String>,
}

async fn prepare_insert(
    client: &Client,
    db: &DbSetup,
) -> Result<tokio_postgres::Statement, CaseFailure> {
    client
        .prepare(&compat_insert_sql(db))
        .await
        .map_err(|e| query_fail(db, "preparing insert_job_compat", &e))
}

/// Read where released Awa keeps `job_ids` of `queues`: queue storage, or the canonical
/// engine's tables (`ready` there is `jobs_hot`, `deferred` is `scheduled_jobs`).
async fn stored(
    client: &Client,
    db: &DbSetup,
    place: &StoredIn,
    job_ids: &[i64],
    queues: &[String],
) -> Result<std::collections::HashMap<i64, Stored>, CaseFailure> {
    let (sql, what) = match place {
        StoredIn::QueueStorage(q) => (
            include_str!("../../../../sql/compat_stored.sql").fill(&[("Q", q)]),
            "reading queue storage",
        ),
        StoredIn::Canonical => (
            include_str!("../../../../sql/compat_stored_canonical.sql")
                .in_schema(db.schema.quoted()),
            "reading jobs_hot and scheduled_jobs",
        ),
    };
    let rows = client
        .query(&sql, &[&job_ids, &queues])
        .await
        .map_err(|e| query_fail(db, what, &e))?;
    let mut out = std::collections::HashMap::new();
    for r in rows {
        let id: i64 = r.get(0);
        let row = Stored {
            queue: r.get(1),
            place: r.get(2),
            enqueue_shard: r.get(3),
            unique_key: r.get(4),
            unique_states: r.get(5),
        };
        if out.insert(id, row).is_some() {
            return Err(CaseFailure::new(format!(
                "job {id} is stored twice (ready and deferred)"
            )));
        }
    }
    Ok(out)
}

/// The jobs holding a uniqueness claim on `key`.
async fn claims(client: &Client, db: &DbSetup, key: &[u8]) -> Result<Vec<i64>, CaseFailure> {
    Ok(client
        .query(
            &include_str!("../../../../sql/compat_claims.sql").in_schema(db.schema.quoted()),
            &[&key],
        )
        .await
        .map_err(|e| query_fail(db, "reading job_unique_claims", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// One call inside a savepoint, so an expected error leaves the transaction usable.
async fn attempt(
    client: &Client,
    st: &tokio_postgres::Statement,
    db: &DbSetup,
    call: &CompatCall,
) -> Result<Result<CompatReturned, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT compat")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = compat_insert(client, st, call).await;
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT compat"
    } else {
        "ROLLBACK TO SAVEPOINT compat"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}
