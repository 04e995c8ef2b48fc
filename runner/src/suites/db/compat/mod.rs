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
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::quote_ident;

/// The suite prefix of every compat case (`sql::compat::<group>::<case>`). Group names never
/// end in a vector family's name, so a family filter such as `unique_key::` keeps selecting
/// the offline cases only.
const SUITE: &str = "compat";

/// Released Awa as preflight found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Released {
    /// `max(version)` of `schema_version`.
    pub schema_version: i32,
    /// `active_queue_storage_schema()`: the queue-storage schema, or `None` on the canonical
    /// engine.
    pub storage_schema: Option<String>,
}

impl Released {
    /// The provenance line naming what was checked.
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "released Awa, schema version {}, insert_job_compat, storage engine {}",
            self.schema_version,
            self.engine()
        )
    }

    /// The storage engine's name.
    #[must_use]
    pub fn engine(&self) -> &'static str {
        if self.storage_schema.is_some() {
            "queue_storage"
        } else {
            "canonical"
        }
    }

    /// Why a contract case (`sql::…` outside the compat suite) does not apply.
    #[must_use]
    pub fn contract_case_reason(&self, name: &str) -> String {
        let what = if [
            "::cd-",
            "::cs-",
            "::rp-",
            "::ms-",
            "concurrency",
            "route",
            "race",
            "move_shard",
        ]
        .iter()
        .any(|w| name.contains(w))
        {
            "released Awa has no concurrency key (no digest, no concurrency shard, no route \
             source) and no move_shard"
        } else {
            "released Awa has no insert_job, job_routing or contract_capabilities"
        };
        format!(
            "{what} (schema version {}): this case checks contract v1, which arrives with \
             awa.insert_job; the sql::compat::* cases check insert_job_compat instead",
            self.schema_version
        )
    }
}

/// Whether `schema` holds released Awa (see the module docs); `None`: it does not (the
/// caller reports the contract schema as missing).
///
/// # Errors
/// The catalog query failed.
pub(crate) async fn detect(
    client: &Client,
    schema: &str,
) -> Result<Option<Released>, tokio_postgres::Error> {
    let row = client
        .query_one(
            include_str!("../../../../sql/compat_detect.sql"),
            &[&schema],
        )
        .await?;
    let (versions, compat, insert_job, locator): (bool, bool, bool, bool) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    if !(versions && compat && !insert_job && locator) {
        return Ok(None);
    }
    let row = client
        .query_one(
            &include_str!("../../../../sql/compat_released.sql")
                .replace("@S@", &quote_ident(schema)),
            &[],
        )
        .await?;
    Ok(Some(Released {
        schema_version: row.get::<_, Option<i32>>(0).unwrap_or(0),
        storage_schema: row.get(1),
    }))
}

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

/// The released setup of a compat case (the trials are built only for released Awa).
fn released(db: &DbSetup) -> Result<&Released, CaseFailure> {
    db.compat.as_ref().ok_or_else(|| {
        CaseFailure::harness("a compat case ran on a database that is not released Awa")
    })
}

/// The quoted queue-storage schema, or the reason the case does not apply.
pub(crate) fn storage(db: &DbSetup) -> Result<Result<String, String>, CaseFailure> {
    let rel = released(db)?;
    Ok(rel
        .storage_schema
        .as_deref()
        .map(quote_ident)
        .ok_or_else(|| {
            format!(
            "the storage engine is canonical, which keeps no enqueue shard and no claim table: \
             activate queue storage (a fresh 0.6.x worker does: SELECT \
             {}.storage_auto_finalize_if_fresh('{}')) and rerun",
            db.schema.quoted(),
            db.schema
        )
        }))
}

/// One `insert_job_compat` call, every argument explicit (the compat cases' calls, and the
/// producer engine's reference on released Awa).
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) kind: String,
    pub(crate) queue: String,
    pub(crate) args: String,
    pub(crate) state: &'static str,
    pub(crate) priority: i16,
    pub(crate) max_attempts: i16,
    pub(crate) run_at: Option<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) unique_key: Option<Vec<u8>>,
    pub(crate) unique_states: Option<String>,
    pub(crate) ordering_key: Option<Vec<u8>>,
}

/// A `run_at` far in the future, for jobs that start `scheduled`.
const FUTURE: &str = "2999-01-01T00:00:00Z";

impl Call {
    /// An `available` job with released defaults on `queue`.
    fn on(queue: &str) -> Self {
        Self {
            kind: "awa_conformance.compat".to_owned(),
            queue: queue.to_owned(),
            args: "{}".to_owned(),
            state: "available",
            priority: 2,
            max_attempts: 25,
            run_at: None,
            tags: Vec::new(),
            unique_key: None,
            unique_states: None,
            ordering_key: None,
        }
    }

    /// Start the job in `state`: `scheduled` also gets a future `run_at`, as the SDKs send it.
    fn state(mut self, state: &'static str) -> Self {
        self.state = state;
        self.run_at = (state == "scheduled").then(|| FUTURE.to_owned());
        self
    }

    fn unique(mut self, key: &[u8], states: &str) -> Self {
        self.unique_key = Some(key.to_vec());
        self.unique_states = Some(states.to_owned());
        self
    }

    fn ordering(mut self, key: &[u8]) -> Self {
        self.ordering_key = Some(key.to_vec());
        self
    }
}

/// What `insert_job_compat` returned.
#[derive(Debug, Clone)]
pub(crate) struct Returned {
    pub(crate) job_id: i64,
    queue: Option<String>,
    state: Option<String>,
    unique_key: Option<Vec<u8>>,
    unique_states: Option<String>,
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

pub(crate) fn insert_sql(db: &DbSetup) -> String {
    include_str!("../../../../sql/compat_insert.sql").replace("@S@", db.schema.quoted())
}

/// Call `insert_job_compat` once.
pub(crate) async fn insert(
    client: &Client,
    st: &tokio_postgres::Statement,
    c: &Call,
) -> Result<Returned, tokio_postgres::Error> {
    let row = client
        .query_one(
            st,
            &[
                &c.kind,
                &c.queue,
                &c.args,
                &c.state,
                &c.priority,
                &c.max_attempts,
                &c.run_at,
                &c.tags,
                &c.unique_key,
                &c.unique_states,
                &c.ordering_key,
            ],
        )
        .await?;
    Ok(Returned {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        state: row.try_get(2)?,
        unique_key: row.try_get(3)?,
        unique_states: row.try_get(4)?,
    })
}

async fn prepare_insert(
    client: &Client,
    db: &DbSetup,
) -> Result<tokio_postgres::Statement, CaseFailure> {
    client
        .prepare(&insert_sql(db))
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
    call: &Call,
) -> Result<Result<Returned, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT compat")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = insert(client, st, call).await;
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
