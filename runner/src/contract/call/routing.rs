//! A job's routing as the judge sees it ([`Observed`]): decoded from `job_routing`, from
//! `insert_job`'s result ([`Inserted`]), or read from released Awa's queue storage
//! (`super::released_job`). One view, so every engine compares the same members.

use serde_json::{json, Value as Json};
use tokio_postgres::Row;

/// A job's routing as stored (`job_routing`, with every column it returns; `job_id` `None`:
/// the database keeps no such job of this login), as `insert_job` returned it, or as
/// released Awa keeps it: the judge's one view of a job's routing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// `job_id`.
    pub job_id: Option<i64>,
    /// The queue.
    pub queue: Option<String>,
    /// The initial state.
    pub state: Option<String>,
    /// The priority.
    pub priority: Option<i16>,
    /// The enqueue shard.
    pub enqueue_shard: Option<i16>,
    /// The route source.
    pub route_source: Option<String>,
    /// The concurrency digest.
    pub concurrency_digest: Option<Vec<u8>>,
    /// The ordering key's digest (stored only; `None` in `insert_job`'s result).
    pub ordering_key_digest: Option<Vec<u8>>,
    /// The unique key.
    pub unique_key: Option<Vec<u8>>,
    /// The unique states as bit text (stored only).
    pub unique_states: Option<String>,
}

/// Lowercase hex of optional bytes, or JSON null.
#[must_use]
pub fn h(b: Option<&[u8]>) -> Json {
    b.map_or(Json::Null, |b| {
        Json::String(awa_conformance_vectors::to_hex(b))
    })
}

impl Observed {
    /// The JSON shown in reports.
    #[must_use]
    pub fn to_json(&self) -> Json {
        json!({
            "job_id": self.job_id,
            "queue": self.queue,
            "state": self.state,
            "priority": self.priority,
            "enqueue_shard": self.enqueue_shard,
            "route_source": self.route_source,
            "concurrency_digest_hex": h(self.concurrency_digest.as_deref()),
            "ordering_key_digest_hex": h(self.ordering_key_digest.as_deref()),
            "unique_key_hex": h(self.unique_key.as_deref()),
            "unique_states": self.unique_states,
        })
    }
}

/// What `insert_job` returned: the new job's id, and the judge's view of its routing
/// (`insert_job`'s result carries no ordering-key digest and no unique states).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inserted {
    /// `job_id`.
    pub job_id: i64,
    /// The returned row as the judge sees it.
    pub returned: Observed,
}

impl Inserted {
    /// Decode one row of `insert_job_call.sql`.
    ///
    /// # Errors
    /// A column of another type than the contract's.
    pub fn decode(row: &Row) -> Result<Self, tokio_postgres::Error> {
        let job_id = row.try_get(0)?;
        Ok(Self {
            job_id,
            returned: Observed {
                job_id: Some(job_id),
                queue: row.try_get(1)?,
                state: row.try_get(2)?,
                priority: row.try_get(3)?,
                enqueue_shard: row.try_get(4)?,
                route_source: row.try_get(5)?,
                concurrency_digest: row.try_get(6)?,
                ordering_key_digest: None,
                unique_key: row.try_get(7)?,
                unique_states: None,
            },
        })
    }
}

impl Observed {
    /// Decode one row of `job_routing_call.sql` (and the first ten columns of
    /// `job_stored_call.sql`).
    ///
    /// # Errors
    /// A column of another type than the contract's.
    pub fn decode(row: &Row) -> Result<Self, tokio_postgres::Error> {
        Ok(Self {
            job_id: row.try_get(0)?,
            queue: row.try_get(1)?,
            enqueue_shard: row.try_get(2)?,
            route_source: row.try_get(3)?,
            concurrency_digest: row.try_get(4)?,
            ordering_key_digest: row.try_get(5)?,
            unique_key: row.try_get(6)?,
            unique_states: row.try_get(7)?,
            state: row.try_get(8)?,
            priority: row.try_get(9)?,
        })
    }
}
