//! One staged batch of `sql::bulk::*`: its rows (the insert_job parameters with the routing
//! the producer states), their COPY payload, a run-scoped batch id, staging and publishing
//! inside a savepoint, what a batch leaves behind, and the two outcomes a case expects of
//! `publish_batch`: every row published as staged and routed, or nothing (ZA006 naming the
//! row).

use crate::pg::SqlText;

use futures_util::SinkExt;
use serde_json::json;
use tokio_postgres::Client;

use crate::contract::call::bytea_text;
use crate::contract::judge::{rejection, Member, Rejection};
use crate::contract::target::DbSetup;
use crate::outcome::CaseFailure;
use crate::suites::db::case::{query_fail, setup_fail};
use crate::suites::db::request::{prepare, read, unique_bytes, InsertJob};
use awa_conformance_vectors::to_hex as hex;

/// One staged row: the insert_job parameters plus the routing the producer states.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) row_no: i32,
    pub(super) req: InsertJob,
    pub(super) digest: Option<Vec<u8>>,
    pub(super) shard: Option<i16>,
    pub(super) source: Option<String>,
}

impl Row {
    /// A row whose stated routing is the core's for `width` (rotor: no shard).
    pub(super) fn routed(row_no: i32, req: InsertJob, width: u8) -> Result<Self, CaseFailure> {
        let w = awa_conformance_core::Width::new(i64::from(width))
            .map_err(|e| CaseFailure::harness(format!("width {width}: {e}")))?;
        let r = awa_conformance_core::route(
            w,
            req.ordering_key.as_deref(),
            req.concurrency_key.as_deref(),
        )
        .map_err(|e| CaseFailure::harness(format!("core routing of row {row_no}: {e}")))?;
        Ok(Self {
            row_no,
            req,
            digest: r.concurrency_digest.map(|d| d.to_vec()),
            shard: r.enqueue_shard.map(i16::from),
            source: Some(r.source.as_str().to_owned()),
        })
    }
}

/// One CSV field: NULL is an unquoted empty field, anything else is quoted.
fn field(out: &mut String, value: Option<&str>) {
    if let Some(v) = value {
        out.push('"');
        out.push_str(&v.replace('"', "\"\""));
        out.push('"');
    }
}

/// The COPY (FORMAT csv) payload of `rows` for `batch`.
fn csv(batch: &str, rows: &[Row]) -> String {
    let mut out = String::new();
    for r in rows {
        let fields: Vec<Option<String>> = [Some(batch.to_owned()), Some(r.row_no.to_string())]
            .into_iter()
            .chain(r.req.staged())
            .chain([
                r.digest.as_deref().map(bytea_text),
                r.shard.map(|s| s.to_string()),
                r.source.clone(),
            ])
            .collect();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            field(&mut out, f.as_deref());
        }
        out.push('\n');
    }
    out
}

/// A batch id unique to the run (a UUID built from a run-scoped digest).
pub(super) fn batch_id(db: &DbSetup) -> String {
    let h = hex(&unique_bytes(db, "batch"));
    let part = |a: usize, b: usize| h.get(a..b).unwrap_or("0");
    format!(
        "{}-{}-{}-{}-{}",
        part(0, 8),
        part(8, 12),
        part(12, 16),
        part(16, 20),
        part(20, 32)
    )
}

/// COPY `rows` into the staging table.
pub(super) async fn stage(
    client: &Client,
    db: &DbSetup,
    batch: &str,
    rows: &[Row],
) -> Result<(), tokio_postgres::Error> {
    let sink = client
        .copy_in(&include_str!("../../../../sql/bulk_copy.sql").in_schema(db.schema.quoted()))
        .await?;
    let mut sink = Box::pin(sink);
    sink.send(std::io::Cursor::new(csv(batch, rows).into_bytes()))
        .await?;
    sink.as_mut().finish().await?;
    Ok(())
}

/// Stage and publish inside a savepoint (an error leaves the transaction usable); the
/// outer error is a harness or staging failure, the inner one the publish outcome.
pub(super) async fn stage_and_publish(
    client: &Client,
    db: &DbSetup,
    batch: &str,
    rows: &[Row],
) -> Result<Result<Vec<i64>, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT bulk")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = match stage(client, db, batch, rows).await {
        Ok(()) => publish(client, db, batch).await,
        Err(e) => {
            return Err(query_fail(
                db,
                "COPY into bulk_staging (the producer's staging step)",
                &e,
            ))
        }
    };
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT bulk"
    } else {
        "ROLLBACK TO SAVEPOINT bulk"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}

pub(super) async fn publish(
    client: &Client,
    db: &DbSetup,
    batch: &str,
) -> Result<Vec<i64>, tokio_postgres::Error> {
    let row = client
        .query_one(
            &include_str!("../../../../sql/bulk_publish.sql").in_schema(db.schema.quoted()),
            &[&batch],
        )
        .await?;
    row.try_get(0)
}

/// Rows of `batch` still staged and jobs in `queues` (read as the installer).
pub(super) async fn leftovers(
    client: &Client,
    db: &DbSetup,
    batch: &str,
    queues: &[String],
) -> Result<(i64, i64), CaseFailure> {
    let row = client
        .query_one(
            &include_str!("../../../../sql/bulk_leftovers.sql").in_schema(db.schema.quoted()),
            &[&batch, &queues],
        )
        .await
        .map_err(|e| setup_fail(db, "counting staged rows and jobs", &e))?;
    Ok((row.get(0), row.get(1)))
}

/// Publish must succeed; then every job reads back as staged and nothing stays staged.
pub(super) async fn must_publish(
    client: &Client,
    db: &DbSetup,
    rows: &[Row],
    what: &str,
) -> Result<Vec<i64>, CaseFailure> {
    let batch = batch_id(db);
    let ids = stage_and_publish(client, db, &batch, rows)
        .await?
        .map_err(|e| query_fail(db, &format!("{what}: publish_batch (must publish)"), &e))?;
    let mut distinct = ids.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if ids.len() != rows.len() || distinct.len() != ids.len() {
        return Err(CaseFailure::mismatch(
            format!("{what}: publish_batch must return one new job id per staged row"),
            json!({"distinct_job_ids": rows.len()}),
            json!({"job_ids": ids}),
        ));
    }
    let queues: Vec<String> = rows.iter().map(|r| r.req.queue.clone()).collect();
    let (staged, _) = leftovers(client, db, &batch, &queues).await?;
    if staged != 0 {
        return Err(CaseFailure::mismatch(
            format!("{what}: a published batch must leave no staged rows"),
            json!({"staged_rows": 0}),
            json!({"staged_rows": staged}),
        ));
    }
    let (_, rd) = prepare(client, db).await?;
    let mut by_row: Vec<&Row> = rows.iter().collect();
    by_row.sort_by_key(|r| r.row_no);
    for (r, id) in by_row.into_iter().zip(&ids) {
        let s = read(client, &rd, *id)
            .await
            .map_err(|e| query_fail(db, &format!("job_routing({id})"), &e))?;
        let width = width_of(&r.req.queue);
        let shard_ok = match (r.shard, s.enqueue_shard) {
            (Some(want), Some(got)) => want == got,
            (None, Some(got)) => (0..i16::from(width)).contains(&got),
            (_, None) => false,
        };
        let want_okd = r
            .req
            .ordering_key
            .as_deref()
            .map(|k| awa_conformance_core::concurrency_digest(k).to_vec());
        let ok = s.job_id == Some(*id)
            && shard_ok
            && s.route_source == r.source
            && s.concurrency_digest == r.digest
            && s.ordering_key_digest == want_okd
            && s.queue.as_deref() == Some(r.req.queue.as_str())
            && s.priority == Some(r.req.priority)
            && s.state.as_deref() == Some(r.req.expected_state())
            && s.unique_key == r.req.unique_key
            && s.unique_states == r.req.unique_states;
        if !ok {
            return Err(CaseFailure::mismatch(
                format!(
                    "{what}: row {} (job {id}) is not stored as staged and routed by the contract \
                     (ids are returned in row order)",
                    r.row_no
                ),
                json!({
                    "queue": r.req.queue, "priority": r.req.priority,
                    "state": r.req.expected_state(), "route_source": r.source,
                    "enqueue_shard": r.shard.map_or_else(
                        || json!(format!("any in [0, {width})")), |s| json!(s)),
                    "concurrency_digest_hex": r.digest.as_deref().map(hex),
                    "ordering_key_digest_hex": want_okd.as_deref().map(hex),
                    "unique_key_hex": r.req.unique_key.as_deref().map(hex),
                    "unique_states": r.req.unique_states,
                }),
                json!({
                    "job_id": s.job_id, "queue": s.queue, "priority": s.priority,
                    "state": s.state, "route_source": s.route_source,
                    "enqueue_shard": s.enqueue_shard,
                    "concurrency_digest_hex": s.concurrency_digest.as_deref().map(hex),
                    "ordering_key_digest_hex": s.ordering_key_digest.as_deref().map(hex),
                    "unique_key_hex": s.unique_key.as_deref().map(hex),
                    "unique_states": s.unique_states,
                }),
            ));
        }
    }
    Ok(ids)
}

/// The width encoded in a queue made by
/// [`set_widths`](crate::suites::db::request::set_widths) (`…_w<width>`), else 1.
fn width_of(queue: &str) -> u8 {
    queue
        .rsplit_once("_w")
        .and_then(|(_, w)| w.parse().ok())
        .unwrap_or(1)
}

/// Publish must fail with ZA006 `code` naming `row`, with the given DETAIL members; nothing
/// of the batch may be published or left staged.
pub(super) async fn must_reject(
    client: &Client,
    db: &DbSetup,
    rows: &[Row],
    what: &str,
    code: &str,
    row: i32,
    members: Vec<(&'static str, Member)>,
) -> Result<Rejection, CaseFailure> {
    let batch = batch_id(db);
    let res = stage_and_publish(client, db, &batch, rows).await?;
    let rej = rejection(db, what, res)?;
    rej.expect(what, "ZA006", Some(code), None)?;
    let mut all = vec![
        ("row", Member::Eq(json!(row))),
        ("batch", Member::Eq(json!(batch))),
    ];
    all.extend(members);
    rej.expect_detail(what, &all)?;
    let queues: Vec<String> = rows.iter().map(|r| r.req.queue.clone()).collect();
    let (staged, jobs) = leftovers(client, db, &batch, &queues).await?;
    if staged != 0 || jobs != 0 {
        return Err(CaseFailure::mismatch(
            format!("{what}: a rejected batch must publish nothing and leave nothing staged"),
            json!({"staged_rows": 0, "jobs": 0}),
            json!({"staged_rows": staged, "jobs": jobs}),
        ));
    }
    Ok(rej)
}
