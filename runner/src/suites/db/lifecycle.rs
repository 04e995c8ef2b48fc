//! `sql::lifecycle::*`: what happens to a job's shard after it is enqueued (contract §9).
//!
//! * `lower_width`: an operator lowers a queue's `enqueue_shards`. Jobs already stored keep
//!   their shard (durable routing metadata, also when it is now out of range), and new jobs
//!   route at the new width, which `queue_enqueue_shards` reports.
//! * `priority_move_keeps_shard`: a job that moves within its queue (a priority change) keeps
//!   its shard: `move_shard(stored, width of the same queue)` is the stored shard.
//! * `cross_queue_move_retained_mod_dest`: a job that moves to another queue gets
//!   `retained % destination width` through the SQL `move_shard` helper, for real jobs and for
//!   the whole grid of retained shards 0..=63 × widths 1..=64.
//! * `move_shard_refusals`: a width outside 1..=64 is ZA004, a retained shard outside 0..=63
//!   is 22003.
//!
//! Every case runs in a rolled-back transaction on run-scoped queues.

use crate::pg::SqlText;
use std::sync::Arc;

use crate::contract::features::Feature;

use awa_conformance_core::{concurrency_digest, concurrency_shard, ordering_shard, Width};
use serde_json::json;
use tokio_postgres::Client;

use super::case::{query_fail, rolled_back, setup_fail, Case};
use super::request::{
    insert, prepare, read, req, set_widths, unique_name, width_queue, InsertJob, Inserted,
};
use super::DbSetup;
use crate::contract::judge::rejection;
use crate::outcome::{CaseFailure, Verdict};

/// The width a queue starts at in `lower_width`, and the one it is lowered to.
const HIGH: u8 = 64;
const LOW: u8 = 8;
/// Destination widths of the cross-queue move: 1, odd, prime, powers of two, the maximum.
const DESTINATIONS: [u8; 7] = [1, 3, 7, 8, 16, 63, 64];
/// Widths of the same-queue (priority) move.
const SAME_QUEUE_WIDTHS: [u8; 5] = [1, 3, 8, 63, 64];

fn width(w: u8) -> Result<Width, CaseFailure> {
    Width::new(i64::from(w)).map_err(|e| CaseFailure::harness(format!("width {w}: {e}")))
}

/// Ordering keys whose shard at `HIGH` is at least `LOW`, so lowering the width would move them
/// if an implementation re-resolved stored shards.
fn keys_beyond_low(label: &str, n: usize) -> Result<Vec<Vec<u8>>, CaseFailure> {
    let high = width(HIGH)?;
    let keys: Vec<Vec<u8>> = (0u32..10_000)
        .map(|i| format!("lifecycle-{label}-{i}").into_bytes())
        .filter(|k| ordering_shard(k, high) >= LOW)
        .take(n)
        .collect();
    if keys.len() == n {
        Ok(keys)
    } else {
        Err(CaseFailure::harness("could not pick lifecycle keys"))
    }
}

/// Insert every request, failing the case on the first error.
async fn insert_all(
    client: &Client,
    db: &DbSetup,
    reqs: &[InsertJob],
    what: &str,
) -> Result<Vec<Inserted>, CaseFailure> {
    let (ins, _) = prepare(client, db).await?;
    let mut out = Vec::with_capacity(reqs.len());
    for r in reqs {
        out.push(
            insert(client, &ins, r)
                .await
                .map_err(|e| query_fail(db, what, &e))?,
        );
    }
    Ok(out)
}

/// The shard `job_routing` reports for each job.
async fn stored_shards(
    client: &Client,
    db: &DbSetup,
    jobs: &[Inserted],
) -> Result<Vec<Option<i16>>, CaseFailure> {
    let (_, rd) = prepare(client, db).await?;
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        let s = read(client, &rd, j.job_id)
            .await
            .map_err(|e| query_fail(db, &format!("job_routing({})", j.job_id), &e))?;
        out.push(s.enqueue_shard);
    }
    Ok(out)
}

async fn set_width(client: &Client, db: &DbSetup, queue: &str, w: u8) -> Result<(), CaseFailure> {
    client
        .execute(
            &include_str!("../../../sql/lifecycle_set_width.sql").in_schema(db.schema.quoted()),
            &[&queue, &i16::from(w)],
        )
        .await
        .map_err(|e| setup_fail(db, "changing queue_meta.enqueue_shards", &e))?;
    Ok(())
}

/// `(stored shard, move_shard(stored, width of dest))` of a job moving to `dest`.
async fn moved(
    client: &Client,
    db: &DbSetup,
    job: i64,
    dest: &str,
) -> Result<(Option<i32>, Option<i32>), CaseFailure> {
    let row = client
        .query_one(
            &include_str!("../../../sql/lifecycle_move_job.sql").in_schema(db.schema.quoted()),
            &[&job, &dest],
        )
        .await
        .map_err(|e| query_fail(db, &format!("moving job {job} to {dest}"), &e))?;
    let stored: Option<i16> = row
        .try_get(0)
        .map_err(|e| CaseFailure::new(format!("job_routing enqueue_shard: {e}")))?;
    let to: Option<i32> = row
        .try_get(1)
        .map_err(|e| CaseFailure::new(format!("move_shard result: {e}")))?;
    Ok((stored.map(i32::from), to))
}

fn lower_width(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        let queue = width_queue(&base, HIGH);
        set_widths(client, db, &base, &[HIGH]).await?;
        let ordering = keys_beyond_low("ok", 3)?;
        let concurrency = b"lifecycle-tenant".to_vec();
        let mut reqs: Vec<InsertJob> = ordering
            .iter()
            .map(|k| req(&queue).keys(Some(k), None))
            .collect();
        reqs.push(req(&queue).keys(None, Some(&concurrency)));
        reqs.push(req(&queue));
        let before = insert_all(client, db, &reqs, "insert_job before lowering").await?;
        let stored_before = stored_shards(client, db, &before).await?;

        set_width(client, db, &queue, LOW).await?;
        let stored_after = stored_shards(client, db, &before).await?;
        if stored_after != stored_before {
            return Err(CaseFailure::mismatch(
                format!(
                    "lowering {queue} from {HIGH} to {LOW} shards changed the stored shards of \
                     jobs already enqueued: the shard is durable routing metadata (§9), kept \
                     until the job moves"
                ),
                json!(stored_before),
                json!(stored_after),
            ));
        }

        let width_read: i16 = client
            .query_one(
                &include_str!("../../../sql/queue_enqueue_shards_call.sql")
                    .in_schema(db.schema.quoted()),
                &[&queue],
            )
            .await
            .map_err(|e| query_fail(db, "queue_enqueue_shards", &e))?
            .try_get(0)
            .map_err(|e| CaseFailure::new(format!("queue_enqueue_shards result: {e}")))?;
        let low = width(LOW)?;
        let after = insert_all(client, db, &reqs, "insert_job after lowering").await?;
        let want: Vec<Option<u8>> = ordering
            .iter()
            .map(|k| Some(ordering_shard(k, low)))
            .chain([Some(concurrency_shard(
                &concurrency_digest(&concurrency),
                low,
            ))])
            .collect();
        let got: Vec<Option<i16>> = after.iter().map(|i| i.returned.enqueue_shard).collect();
        let keyed_ok = want.iter().zip(&got).all(|(w, g)| w.map(i16::from) == *g);
        let rotor_ok = got
            .last()
            .copied()
            .flatten()
            .is_some_and(|s| (0..i16::from(LOW)).contains(&s));
        if keyed_ok && rotor_ok && width_read == i16::from(LOW) {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!("after lowering {queue} to {LOW} shards, new jobs must route at width {LOW}"),
            json!({"queue_enqueue_shards": LOW, "keyed_shards": want, "rotor_shard": format!("0..{LOW}")}),
            json!({"queue_enqueue_shards": width_read, "shards": got}),
        ))
    })
}

fn priority_move_keeps_shard(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &SAME_QUEUE_WIDTHS).await?;
        let mut problems = Vec::new();
        for w in SAME_QUEUE_WIDTHS {
            let queue = width_queue(&base, w);
            let mut reqs: Vec<InsertJob> = (0..6)
                .map(|i| {
                    let key = format!("lifecycle-priority-{i}").into_bytes();
                    let r = req(&queue);
                    if i % 2 == 0 {
                        r.keys(Some(&key), None)
                    } else {
                        r.keys(None, Some(&key))
                    }
                })
                .collect();
            reqs.push(req(&queue));
            for job in insert_all(client, db, &reqs, "insert_job").await? {
                let (stored, to) = moved(client, db, job.job_id, &queue).await?;
                if stored.is_none() || stored != to {
                    problems.push(
                        json!({"width": w, "job": job.job_id, "stored": stored, "after_move": to}),
                    );
                }
            }
        }
        if problems.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "a job moving within its own queue (a priority change) must keep its shard: \
             move_shard(stored, the queue's width) = stored",
            json!([]),
            json!(problems),
        ))
    })
}

fn cross_queue_move(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        let mut widths = DESTINATIONS.to_vec();
        widths.push(HIGH);
        widths.sort_unstable();
        widths.dedup();
        set_widths(client, db, &base, &widths).await?;
        let source = width_queue(&base, HIGH);
        let reqs: Vec<InsertJob> = keys_beyond_low("move", 8)?
            .iter()
            .map(|k| req(&source).keys(Some(k), None))
            .collect();
        let mut problems = Vec::new();
        for job in insert_all(client, db, &reqs, "insert_job on the source queue").await? {
            for d in DESTINATIONS {
                let (stored, to) = moved(client, db, job.job_id, &width_queue(&base, d)).await?;
                let want = stored.map(|s| s % i32::from(d));
                if stored.is_none() || to != want {
                    problems.push(
                        json!({"job": job.job_id, "stored": stored, "destination_width": d,
                                         "want": want, "got": to}),
                    );
                }
            }
        }
        let rows = client
            .query(
                &include_str!("../../../sql/lifecycle_move_shard_grid.sql")
                    .in_schema(db.schema.quoted()),
                &[],
            )
            .await
            .map_err(|e| query_fail(db, "move_shard over 0..=63 x 1..=64", &e))?;
        if rows.len() != 64 * 64 {
            return Err(CaseFailure::harness(format!(
                "the move_shard grid returned {} rows, want 4096",
                rows.len()
            )));
        }
        for row in &rows {
            let (r, d, got): (i32, i32, Option<i32>) = (row.get(0), row.get(1), row.get(2));
            if got != Some(r % d) && problems.len() < 20 {
                problems.push(
                    json!({"retained": r, "destination_width": d, "want": r % d, "got": got}),
                );
            }
        }
        if problems.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "a job moving to another queue gets retained % destination width (§9), never the \
             rotor and never an out-of-range shard (first 20 differences)",
            json!([]),
            json!(problems),
        ))
    })
}

fn move_shard_refusals(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let sql =
            include_str!("../../../sql/lifecycle_move_shard.sql").in_schema(db.schema.quoted());
        let cases: [(i32, i32, &str, Option<&str>); 5] = [
            (0, 0, "ZA004", Some("invalid_width")),
            (0, 65, "ZA004", Some("invalid_width")),
            (64, 8, "22003", None),
            (-1, 8, "22003", None),
            // Both wrong: the width is checked first.
            (64, 0, "ZA004", Some("invalid_width")),
        ];
        for (retained, dest, state, code) in cases {
            client
                .batch_execute("SAVEPOINT m")
                .await
                .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
            let what = format!("move_shard({retained}, {dest})");
            let res = client.query_one(&sql, &[&retained, &dest]).await;
            client
                .batch_execute("ROLLBACK TO SAVEPOINT m")
                .await
                .map_err(|e| query_fail(db, "ROLLBACK TO SAVEPOINT", &e))?;
            rejection(db, &what, res.map(|r| r.get::<_, Option<i32>>(0)))?
                .expect(&what, state, code, None)?;
        }
        Ok(Verdict::Passed)
    })
}

/// The `sql::lifecycle::*` cases.
pub(super) fn cases() -> Vec<Case> {
    vec![
        Case::new("lifecycle", "lower_width", |db| lower_width(&db))
            .checks(&[Feature::OrderingKey, Feature::ConcurrencyKey])
            .requires("job_routing"),
        Case::new("lifecycle", "priority_move_keeps_shard", |db| {
            priority_move_keeps_shard(&db)
        })
        .requires("job_routing")
        .requires("move_shard"),
        Case::new("lifecycle", "cross_queue_move_retained_mod_dest", |db| {
            cross_queue_move(&db)
        })
        .requires("job_routing")
        .requires("move_shard"),
        Case::new("lifecycle", "move_shard_refusals", |db| {
            move_shard_refusals(&db)
        })
        .requires("move_shard"),
    ]
}
