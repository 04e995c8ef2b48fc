//! Released Awa's `insert_job_compat` ([`CompatCall`], [`compat_insert`], [`CompatReturned`]),
//! with or without `p_ordering_key` as the release has it, and the released read-back from
//! queue storage ([`released_job`]): the reference when the database under test is released
//! Awa (docs/released-awa.md).

use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::{initial_state, InsertJob, Observed, FUTURE};
use crate::contract::target::DbSetup;
use crate::pg::SqlText;

/// One `insert_job_compat` call, every argument explicit (the compat cases' calls, and the
/// producer engine's reference on released Awa).
#[derive(Debug, Clone)]
pub struct CompatCall {
    /// `p_kind`.
    pub kind: String,
    /// `p_queue`.
    pub queue: String,
    /// `p_args`, JSON text.
    pub args: String,
    /// `p_state`: released Awa takes the initial state from the caller.
    pub state: &'static str,
    /// `p_priority`.
    pub priority: i16,
    /// `p_max_attempts`.
    pub max_attempts: i16,
    /// `p_run_at`.
    pub run_at: Option<String>,
    /// `p_tags`.
    pub tags: Vec<String>,
    /// `p_unique_key`.
    pub unique_key: Option<Vec<u8>>,
    /// `p_unique_states`, bound as `::bit(8)` as the released SDKs bind it.
    pub unique_states: Option<String>,
    /// `p_ordering_key`.
    pub ordering_key: Option<Vec<u8>>,
}

impl CompatCall {
    /// An `available` job of `kind` with the defaults on `queue`: the released call for a
    /// contract request that asks for nothing else (the defaults are `InsertJob::new`'s, one
    /// place).
    #[must_use]
    pub fn new(kind: &str, queue: &str) -> Self {
        Self::of(&InsertJob::new(kind, queue))
    }

    /// The released SDKs' call for a contract request: a job with `run_at` starts `scheduled`.
    #[must_use]
    pub fn of(r: &InsertJob) -> Self {
        Self {
            kind: r.kind.clone(),
            queue: r.queue.clone(),
            args: r.args.clone(),
            state: initial_state(r.run_at.is_some()),
            priority: r.priority,
            max_attempts: r.max_attempts,
            run_at: r.run_at.clone(),
            tags: r.tags.clone(),
            unique_key: r.unique_key.clone(),
            unique_states: r.unique_states.clone(),
            ordering_key: r.ordering_key.clone(),
        }
    }

    /// Start the job in `state`: `scheduled` also gets a future `run_at`, as the SDKs send it.
    #[must_use]
    pub fn state(mut self, state: &'static str) -> Self {
        self.state = state;
        self.run_at = (state == "scheduled").then(|| FUTURE.to_owned());
        self
    }

    /// `p_unique_key` and `p_unique_states`.
    #[must_use]
    pub fn unique(mut self, key: &[u8], states: &str) -> Self {
        self.unique_key = Some(key.to_vec());
        self.unique_states = Some(states.to_owned());
        self
    }

    /// `p_ordering_key`.
    #[must_use]
    pub fn ordering(mut self, key: &[u8]) -> Self {
        self.ordering_key = Some(key.to_vec());
        self
    }
}

/// What `insert_job_compat` returned.
#[derive(Debug, Clone)]
pub struct CompatReturned {
    /// The job's id.
    pub job_id: i64,
    /// The queue.
    pub queue: Option<String>,
    /// The state.
    pub state: Option<String>,
    /// The unique key.
    pub unique_key: Option<Vec<u8>>,
    /// The unique states as bit text.
    pub unique_states: Option<String>,
}

/// The `insert_job_compat` statement of `db`'s schema, for the signature its released version
/// has: with `p_ordering_key` (0.6.x), or without it (0.5.x, `compat_insert_unordered.sql`).
#[must_use]
pub fn compat_insert_sql(db: &DbSetup) -> String {
    let ordered = db.compat.as_ref().is_none_or(|r| r.ordering_key);
    let sql = if ordered {
        include_str!("../../../sql/compat_insert.sql")
    } else {
        include_str!("../../../sql/compat_insert_unordered.sql")
    };
    sql.in_schema(db.schema.quoted())
}

/// Call `insert_job_compat` once with a prepared [`compat_insert_sql`] statement.
///
/// # Errors
/// The server's refusal, a connection error, or a column of the wrong type.
pub async fn compat_insert(
    client: &Client,
    st: &Statement,
    c: &CompatCall,
) -> Result<CompatReturned, tokio_postgres::Error> {
    let params: [&(dyn ToSql + Sync); 11] = [
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
    ];
    // The statement of a 0.5.x insert_job_compat has no p_ordering_key ($11). The key is left
    // out only when there is none: a key given to it is still bound, so the call fails for its
    // parameter count (an error, never a silently dropped key).
    let bound = if st.params().len() < params.len() && c.ordering_key.is_none() {
        params.get(..st.params().len()).unwrap_or(&params)
    } else {
        &params
    };
    let row = client.query_one(st, bound).await?;
    Ok(CompatReturned {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        state: row.try_get(2)?,
        unique_key: row.try_get(3)?,
        unique_states: row.try_get(4)?,
    })
}

/// Read one job of released Awa from queue storage (`storage`: the quoted queue-storage
/// schema), ready or deferred, as the judge sees it; `Observed::default()` (no job id) when
/// queue storage keeps no such job. Released Awa records no route source, no routing digest
/// and no ordering key.
///
/// # Errors
/// A connection error or a column of the wrong type.
pub async fn released_job(
    client: &Client,
    storage: &str,
    job_id: i64,
) -> Result<Observed, tokio_postgres::Error> {
    let sql = include_str!("../../../sql/released_job.sql").fill(&[("Q", storage)]);
    let Some(r) = client.query_opt(&sql, &[&job_id]).await? else {
        return Ok(Observed::default());
    };
    Ok(Observed {
        job_id: r.try_get(0)?,
        queue: r.try_get(1)?,
        state: r.try_get(2)?,
        priority: r.try_get(3)?,
        enqueue_shard: r.try_get(4)?,
        route_source: None,
        concurrency_digest: None,
        ordering_key_digest: None,
        unique_key: r.try_get(5)?,
        unique_states: r.try_get(6)?,
    })
}
