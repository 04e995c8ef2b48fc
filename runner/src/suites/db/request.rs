//! What the DB cases send: run-scoped names and keys, queue widths, and the pipelined insert
//! and read-back of many requests. The request, its binding and decoding are the call layer's
//! ([`crate::contract::call`]).

use crate::pg::SqlText;
use awa_conformance_vectors::to_hex as hex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value as Json;
use tokio_postgres::{Client, Statement};

use super::case::{query_fail, setup_fail};
use crate::contract::call;
use crate::contract::expect::Payload;
use crate::contract::judge::{judge_kept, judge_payload, row_count};
use crate::contract::sweep::{count_jobs, JobScope};
use crate::contract::target::DbSetup;
use crate::outcome::CaseFailure;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A name unique within the run: `awa_conformance_<run>_<n>`. Parallel cases never share a
/// queue or key, so their uncommitted rows never block each other.
pub(super) fn unique_name(db: &DbSetup) -> String {
    format!("{}_{}", db.prefix(), SEQ.fetch_add(1, Ordering::Relaxed))
}

/// A 32-byte key unique to this run and call (no collision with existing claims).
pub(super) fn unique_bytes(db: &DbSetup, label: &str) -> Vec<u8> {
    let text = format!(
        "{}:{label}:{}",
        db.prefix(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let mut key = awa_conformance_core::concurrency_digest(text.as_bytes()).to_vec();
    key.truncate(32);
    key
}

pub(super) fn opt_hex(bytes: Option<&[u8]>) -> Json {
    bytes.map_or(Json::Null, |b| Json::String(hex(b)))
}

/// Create `queue_meta` rows `<base>_w<width>` for each width (inside the case's transaction).
pub(super) async fn set_widths(
    client: &Client,
    db: &DbSetup,
    base: &str,
    widths: &[u8],
) -> Result<(), CaseFailure> {
    let widths: Vec<i16> = widths.iter().map(|w| i16::from(*w)).collect();
    client
        .execute(
            &include_str!("../../../sql/set_widths.sql").in_schema(db.schema.quoted()),
            &[&base, &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "setting queue_meta.enqueue_shards", &e))?;
    Ok(())
}

/// The queue of `base` at `width` (see [`set_widths`]).
pub(super) fn width_queue(base: &str, width: u8) -> String {
    format!("{base}_w{width}")
}

pub(super) use crate::contract::call::{
    insert, insert_sql, read, read_sql, InsertJob, Inserted, Observed, FUTURE, PAST,
};

/// The kind of every job the SQL suites insert.
pub(super) const KIND: &str = "awa_conformance";

/// A request of the suites' kind with the contract defaults on `queue`.
pub(super) fn req(queue: &str) -> InsertJob {
    InsertJob::new(KIND, queue)
}

/// A width a case uses, as the core's type (a width outside 1..=64 is the harness's bug).
pub(super) fn width(w: u8) -> Result<awa_conformance_core::Width, CaseFailure> {
    awa_conformance_core::Width::new(i64::from(w))
        .map_err(|e| CaseFailure::harness(format!("width {w}: {e}")))
}

/// Prepare the insert and read statements on this connection.
pub(super) async fn prepare(
    client: &Client,
    db: &DbSetup,
) -> Result<(Statement, Statement), CaseFailure> {
    let (ins, read) = futures_util::future::join(
        client.prepare(&insert_sql(db)),
        client.prepare(&read_sql(db)),
    )
    .await;
    Ok((
        ins.map_err(|e| query_fail(db, "preparing insert_job", &e))?,
        read.map_err(|e| query_fail(db, "preparing job_routing", &e))?,
    ))
}

/// Whether a check's session may count the rows its requests stored (the row-count rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rows {
    /// The runner's own session on queues of the check's own: counted.
    Counted,
    /// A login holding only the producer role, which reads no table (what the privilege
    /// suite checks), on queues committed for the whole suite: not counted there; the same
    /// vectors' function cases, run as the runner, count them.
    NotVisible,
}

/// The job rows of `queues` this connection sees (the row-count rule's count).
async fn jobs_in(client: &Client, db: &DbSetup, queues: &[String]) -> Result<i64, CaseFailure> {
    let scope = JobScope {
        queues,
        ..JobScope::default()
    };
    count_jobs(client, db, scope)
        .await
        .map_err(|e| CaseFailure::harness(format!("counting the case's job rows: {e}")))
}

/// Insert many requests pipelined on one connection, then read every stored routing in one
/// statement (`call::read_many`): a few round trips per case however many widths it covers. The
/// requests' queues must then hold exactly one more job row per request (the row-count rule),
/// where `rows` lets the session count them.
pub(super) async fn insert_and_read_all(
    client: &Client,
    db: &DbSetup,
    reqs: &[InsertJob],
    rows: Rows,
) -> Result<Vec<(Inserted, Observed)>, CaseFailure> {
    let mut queues: Vec<String> = reqs.iter().map(|r| r.queue.clone()).collect();
    queues.sort();
    queues.dedup();
    let before = match rows {
        Rows::Counted => jobs_in(client, db, &queues).await?,
        Rows::NotVisible => 0,
    };
    // Revision 1.2: the whole stored job is judged too (ADR 0052).
    let payload = db.has("job_stored");
    let asked = if payload && !reqs.is_empty() {
        Some(
            call::asked(client, reqs)
                .await
                .map_err(|e| query_fail(db, "reading what the server makes of the payload", &e))?,
        )
    } else {
        None
    };
    let ins = client
        .prepare(&insert_sql(db))
        .await
        .map_err(|e| query_fail(db, "preparing insert_job", &e))?;
    let inserted =
        futures_util::future::join_all(reqs.iter().map(|r| insert(client, &ins, r))).await;
    let mut ok = Vec::with_capacity(reqs.len());
    for (r, res) in reqs.iter().zip(inserted) {
        match res {
            Ok(i) => ok.push(i),
            Err(e) => {
                return Err(query_fail(
                    db,
                    &format!(
                        "insert_job(queue {}, ordering_key {}, concurrency_key {}, opts {})",
                        r.queue,
                        opt_hex(r.ordering_key.as_deref()),
                        opt_hex(r.concurrency_key.as_deref()),
                        r.opts
                    ),
                    &e,
                ))
            }
        }
    }
    let ids: Vec<i64> = ok.iter().map(|i| i.job_id).collect();
    let stored = call::read_many(client, db.schema.quoted(), &ids)
        .await
        .map_err(|e| query_fail(db, &read_label("job_routing", &ids), &e))?;
    let mut out = Vec::with_capacity(ok.len());
    for ((i, s), r) in ok.into_iter().zip(stored).zip(reqs) {
        judge_kept(r, &i.returned, &s)?;
        out.push((i, s));
    }
    if rows == Rows::Counted {
        let after = jobs_in(client, db, &queues).await?;
        row_count(out.len(), after.saturating_sub(before), "insert_job")?;
    }
    if let Some((asked, from)) = asked {
        judge_stored_payloads(client, db, reqs, &out, asked, &from).await?;
    }
    Ok(out)
}

/// What a failed read-back of `ids` names: the function and the case's jobs, short (a routing
/// vector's case has 64).
fn read_label(function: &str, ids: &[i64]) -> String {
    match ids {
        [one] => format!("{function}({one})"),
        [first, .., last] => format!(
            "{function} of the case's {} jobs ({first}..{last})",
            ids.len()
        ),
        [] => format!("{function} of no job"),
    }
}

/// Read every inserted job whole (`job_stored`, one statement for all) and judge its payload
/// against what its request asked, as the server's own types make it.
async fn judge_stored_payloads(
    client: &Client,
    db: &DbSetup,
    reqs: &[InsertJob],
    inserted: &[(Inserted, Observed)],
    asked: Vec<call::Asked>,
    from: &str,
) -> Result<(), CaseFailure> {
    let ids: Vec<i64> = inserted.iter().map(|(i, _)| i.job_id).collect();
    let whole = call::stored_many(client, db.schema.quoted(), &ids)
        .await
        .map_err(|e| query_fail(db, &read_label("job_stored", &ids), &e))?;
    let to = call::clock(client)
        .await
        .map_err(|e| query_fail(db, "reading the server's clock", &e))?;
    for ((r, a), got) in reqs.iter().zip(asked).zip(whole) {
        judge_payload("insert_job", &Payload::asked(r, a, (from, &to)), &got)?;
    }
    Ok(())
}
