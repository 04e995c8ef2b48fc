//! The compat profile: released Awa 0.6.x checked as it is, installing nothing.
//!
//! Released Awa has `insert_job_compat` and no `insert_job` (docs/released-awa.md). Instead of
//! stopping such a database at preflight (exit 5), the runner recognises it ([`detect`]: a
//! `schema_version` table, an `insert_job_compat` that takes `p_ordering_key`, no `insert_job`)
//! and runs the `sql::compat::*` cases, which check what released Awa shares with the contract:
//!
//! * `ordering::w<width>`: every ordering_shard vector at every width 1..=64 through
//!   `insert_job_compat`, on a run-scoped queue whose width is set in `queue_meta`; the shard is
//!   read back from queue storage (`ready_entries.enqueue_shard`);
//! * `unique::<id>`: every unique_key vector's key stored byte-exact, with its claim;
//! * `claims::<id>`: every mask: a second insert with the same key is refused with 23505
//!   on `idx_awa_jobs_unique` exactly when the first job's initial state (available, then
//!   scheduled) is in the mask;
//! * `validation::*`: the released validation SQLSTATEs and messages the contract copies;
//! * `partitioned::<id>`: every partition vector's physical queue takes the job with its key's
//!   ordering shard.
//!
//! Every case runs in a transaction that is rolled back: the run commits nothing, so the
//! database is left as found (row counts of every table; only sequence values, which
//! PostgreSQL never rolls back, move on). The contract's own `sql::*` cases are reported
//! not applicable, each with the reason (released Awa has no concurrency key, no route source,
//! no `job_routing`). Cases needing queue storage are not applicable on the canonical engine.

mod routing;
mod unique;
mod validation;

use std::sync::Arc;

use awa_conformance_vectors::VectorSet;
use tokio_postgres::Client;

use super::case::{query_fail, Case};
use crate::contract::call::{compat_insert, compat_insert_sql, CompatCall, CompatReturned};

use crate::contract::target::DbSetup;
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

/// Read where queue storage (schema `q`, quoted) keeps `job_ids` of `queues`.
async fn stored(
    client: &Client,
    db: &DbSetup,
    q: &str,
    job_ids: &[i64],
    queues: &[String],
) -> Result<std::collections::HashMap<i64, Stored>, CaseFailure> {
    let rows = client
        .query(
            &include_str!("../../../../sql/compat_stored.sql").replace("@Q@", q),
            &[&job_ids, &queues],
        )
        .await
        .map_err(|e| query_fail(db, "reading queue storage", &e))?;
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
                "job {id} is stored twice in queue storage (ready and deferred)"
            )));
        }
    }
    Ok(out)
}

/// The jobs holding a uniqueness claim on `key`.
async fn claims(client: &Client, db: &DbSetup, key: &[u8]) -> Result<Vec<i64>, CaseFailure> {
    Ok(client
        .query(
            &include_str!("../../../../sql/compat_claims.sql").replace("@S@", db.schema.quoted()),
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
