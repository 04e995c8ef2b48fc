//! `sql::bulk::*`: the staged bulk path (docs/contract.md §14): rows COPYed into
//! `bulk_staging` with their client-computed routing, then `publish_batch(batch)`, which
//! publishes every row or, on the first bad row, nothing (ZA006 naming that row).
//!
//! The expected routing of every staged row comes from the pure core
//! ([`awa_conformance_core::route`]), never from the database under test. Each case stages
//! and publishes inside a rolled-back transaction, in run-scoped queues; only
//! `staged_rows_never_commit` commits (and removes what a wrong implementation leaves).

use crate::pg::SqlText;
use std::sync::Arc;

use serde_json::{json, Value as Json};
use tokio_postgres::Client;

use super::case::{harness, query_fail, rolled_back, rolled_back_on, setup_fail, Case};
use super::request::{
    insert, prepare, read, req, set_widths, unique_bytes, unique_name, width_queue, InsertJob,
    FUTURE,
};
use super::DbSetup;
use crate::contract::judge::{rejection, Member};
use crate::contract::login::{producer, Producer};
use crate::outcome::{CaseFailure, Verdict};

mod batch;

use batch::{
    batch_id, leftovers, must_publish, must_reject, publish, stage, stage_and_publish, Row,
};

/// Widths every routing case covers (1 and 64 are the bounds; 7 is not a power of two).
const WIDTHS: [u8; 5] = [1, 2, 7, 8, 64];

/// The released default mask: the initial state `available` (bit 1) and `scheduled` (bit 0)
/// both claim.
const CLAIMING: &str = "11111000";

/// A rolled-back case of the bulk suite.
fn case(
    name: &str,
    body: impl AsyncFnOnce(&Client, &Arc<DbSetup>) -> Result<(), CaseFailure> + Send + 'static,
) -> Case {
    Case::new("bulk", name, move |db| {
        rolled_back(&db, async |c| body(c, &db).await).map(|()| Verdict::Passed)
    })
    .requires("bulk")
}

/// Queues `<base>_w<width>` for every width of [`WIDTHS`], created in the case's transaction.
async fn width_queues(c: &Client, db: &DbSetup) -> Result<Vec<(u8, String)>, CaseFailure> {
    let base = unique_name(db);
    set_widths(c, db, &base, &WIDTHS).await?;
    Ok(WIDTHS
        .iter()
        .map(|w| (*w, width_queue(&base, *w)))
        .collect())
}

/// A row's (ordering, concurrency) keys.
type Keys = (Option<Vec<u8>>, Option<Vec<u8>>);

/// Keys of every precedence case: (ordering, concurrency). Bytes 0x80-0xff, the empty key
/// and a key longer than one 64-byte hash block are included.
fn key_cases(db: &DbSetup) -> Vec<Keys> {
    let k = |l: &str| unique_bytes(db, l);
    let high: Vec<u8> = (0x80..=0xff).collect();
    vec![
        (None, None),
        (Some(k("o1")), None),
        (None, Some(k("c1"))),
        (Some(k("o2")), Some(k("c2"))),
        (Some(high.clone()), None),
        (None, Some(high)),
        (Some(Vec::new()), None),
        (None, Some(Vec::new())),
        (Some(vec![0xfe, 0x00, 0xff]), Some(vec![0x00])),
    ]
}

/// A good batch over every width and precedence case, rows staged out of order.
fn good_rows(db: &DbSetup, queues: &[(u8, String)]) -> Result<Vec<Row>, CaseFailure> {
    let mut rows = Vec::new();
    let mut n = 0;
    for (width, queue) in queues {
        for (ok, ck) in key_cases(db) {
            n += 1;
            let mut req = req(queue)
                .keys(ok.as_deref(), ck.as_deref())
                .priority(i16::try_from(n % 4 + 1).unwrap_or(2));
            if n % 3 == 0 {
                req = req.run_at(FUTURE);
            }
            if n % 5 == 0 {
                req = req.unique(Some(&unique_bytes(db, "good")), Some(CLAIMING));
            }
            rows.push(Row::routed(n, req, *width)?);
        }
    }
    // Staging order is not row order: publish_batch orders by row_no.
    rows.reverse();
    Ok(rows)
}

/// `good` plus `bad` at row `at` (rows renumbered 1..).
fn with_bad_row(mut good: Vec<Row>, at: usize, bad: Row) -> Vec<Row> {
    good.sort_by_key(|r| r.row_no);
    good.insert(at.saturating_sub(1).min(good.len()), bad);
    for (i, r) in good.iter_mut().enumerate() {
        r.row_no = i32::try_from(i + 1).unwrap_or(i32::MAX);
    }
    good
}

/// Three good rows in `queue` of width `width`.
fn three_good(db: &DbSetup, queue: &str, width: u8) -> Result<Vec<Row>, CaseFailure> {
    (1..=3)
        .map(|i| {
            let key = unique_bytes(db, "g");
            Row::routed(i, req(queue).keys(None, Some(&key)), width)
        })
        .collect()
}

/// One routing mismatch case: `bad` routed correctly at width 8 in `queue`, then `spoil`ed;
/// expect `bulk_row_mismatch` on `field` at row 2.
async fn mismatch(
    c: &Client,
    db: &DbSetup,
    what: &str,
    keys: Keys,
    field: &'static str,
    spoil: impl FnOnce(&mut Row),
) -> Result<(), CaseFailure> {
    let base = unique_name(db);
    set_widths(c, db, &base, &[8]).await?;
    let q = width_queue(&base, 8);
    let mut bad = Row::routed(0, req(&q).keys(keys.0.as_deref(), keys.1.as_deref()), 8)?;
    spoil(&mut bad);
    let rows = with_bad_row(three_good(db, &q, 8)?, 2, bad);
    must_reject(
        c,
        db,
        &rows,
        what,
        "bulk_row_mismatch",
        2,
        vec![("field", Member::Eq(json!(field)))],
    )
    .await
    .map(|_| ())
}

/// One validation case: a row breaking one insert_job rule at row 3 of 4.
fn invalid(
    name: &'static str,
    sqlstate: &'static str,
    rule: &'static str,
    spoil: fn(&mut InsertJob),
) -> Case {
    case(name, async move |c, db| {
        let q = unique_name(db);
        let mut req = req(&q);
        spoil(&mut req);
        // The core refuses over-long keys, so such a row states the unkeyed routing: the
        // key length is checked before the routing and must be what is named.
        let mut routable = req.clone();
        for k in [&mut routable.ordering_key, &mut routable.concurrency_key] {
            if k.as_ref().is_some_and(|k| k.len() > 4096) {
                *k = None;
            }
        }
        let mut bad = Row::routed(0, routable, 1)?;
        bad.req = req;
        let rows = with_bad_row(three_good(db, &q, 1)?, 3, bad);
        must_reject(
            c,
            db,
            &rows,
            &format!("a batch with a row breaking {rule}"),
            "bulk_row_invalid",
            3,
            vec![
                ("sqlstate", Member::Eq(json!(sqlstate))),
                ("rule", Member::Eq(json!(rule))),
            ],
        )
        .await
        .map(|_| ())
    })
}

/// `staged_rows_never_commit`: rows staged and committed without publish_batch make the
/// commit fail (ZA006 bulk_batch_unpublished), so no staged row outlives its transaction.
fn never_commit(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    db.pg
        .block_on(async {
            let client = db.pg.connect().await.map_err(harness)?;
            let batch = batch_id(db);
            let q = format!("{}_bulkcommit", unique_name(db));
            let row = Row::routed(1, req(&q), 1)?;
            // A producer that stages, then commits without publishing: COMMIT must fail.
            client
                .batch_execute("BEGIN")
                .await
                .map_err(|e| setup_fail(db, "BEGIN", &e))?;
            stage(&client, db, &batch, &[row])
                .await
                .map_err(|e| query_fail(db, "COPY into bulk_staging", &e))?;
            let res = client.batch_execute("COMMIT").await;
            let (staged, jobs) = leftovers(&client, db, &batch, std::slice::from_ref(&q)).await?;
            if staged != 0 {
                // A wrong implementation committed them: remove them again.
                client
                    .execute(
                        &include_str!("../../../sql/bulk_remove_batch.sql")
                            .in_schema(db.schema.quoted()),
                        &[&batch],
                    )
                    .await
                    .map_err(|e| setup_fail(db, "removing committed staged rows", &e))?;
            }
            let rej = rejection(db, "committing staged rows without publish_batch", res)?;
            rej.expect(
                "committing staged rows without publish_batch",
                "ZA006",
                Some("bulk_batch_unpublished"),
                None,
            )?;
            if staged != 0 || jobs != 0 {
                return Err(CaseFailure::mismatch(
                    "staged rows must never commit without publish_batch",
                    json!({"staged_rows": 0, "jobs": 0}),
                    json!({"staged_rows": staged, "jobs": jobs}),
                ));
            }
            Ok(Verdict::Passed)
        })
        .map_err(harness)?
}

/// `producer_stages_and_publishes`: a login holding only the producer role can COPY into
/// the staging table (every column but staged_by) and publish; the jobs are its own.
fn as_producer(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    let pg = match producer(db) {
        Producer::Ready(pg, _) => pg,
        Producer::NotApplicable(reason) => return Ok(Verdict::NotApplicable(reason)),
        Producer::Broken(msg) => return Err(CaseFailure::harness(msg)),
    };
    rolled_back_on(&pg, db, async |client| {
        let q = unique_name(db);
        let rows = three_good(db, &q, 1)?;
        let batch = batch_id(db);
        let ids = stage_and_publish(client, db, &batch, &rows)
            .await?
            .map_err(|e| query_fail(db, "publish_batch as the producer role", &e))?;
        let (ins, rd) = prepare(client, db).await?;
        drop(ins);
        for id in &ids {
            let s = read(client, &rd, *id)
                .await
                .map_err(|e| query_fail(db, "job_routing as the producer role", &e))?;
            if s.job_id != Some(*id) {
                return Err(CaseFailure::mismatch(
                    "a job the producer published in bulk must be its own (enqueued_by = \
                         its session user, readable through job_routing)",
                    json!({"job_id": id}),
                    json!({"job_id": s.job_id}),
                ));
            }
        }
        if ids.len() == rows.len() {
            Ok(())
        } else {
            Err(CaseFailure::mismatch(
                "publish_batch as the producer role must return one job id per staged row",
                json!({"job_ids": rows.len()}),
                json!({"job_ids": ids}),
            ))
        }
    })
    .map(|()| Verdict::Passed)
}

/// The `sql::bulk::*` cases (and the hardening of `publish_batch` in `sql::catalog::`).
#[expect(clippy::too_many_lines, reason = "one list of short cases")]
pub(super) fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = super::catalog::hardening_cases("publish_batch")
        .into_iter()
        .map(|c| c.requires("bulk"))
        .collect();
    out.extend([
        case("publish_all_rows_route_as_computed", async |c, db| {
            let queues = width_queues(c, db).await?;
            let rows = good_rows(db, &queues)?;
            must_publish(c, db, &rows, "a good batch over widths 1-64").await?;
            Ok(())
        }),
        case("one_bad_row_publishes_nothing", async |c, db| {
            // The test: one bad row (an off-by-one client shard) in a batch of good
            // ones; the batch is rejected naming that row, nothing is published or staged.
            let queues = width_queues(c, db).await?;
            let good = good_rows(db, &queues)?;
            let q8 = queues
                .iter()
                .find(|(w, _)| *w == 8)
                .map(|(_, q)| q.clone())
                .ok_or_else(|| CaseFailure::harness("no queue of width 8"))?;
            let key = unique_bytes(db, "obo");
            let mut bad = Row::routed(0, req(&q8).keys(None, Some(&key)), 8)?;
            bad.shard = bad.shard.map(|s| (s + 1) % 8);
            let at = good.len() / 2;
            let rows = with_bad_row(good, at, bad);
            must_reject(
                c,
                db,
                &rows,
                "a batch with one off-by-one shard",
                "bulk_row_mismatch",
                i32::try_from(at).unwrap_or(0),
                vec![("field", Member::Eq(json!("enqueue_shard")))],
            )
            .await?;
            Ok(())
        }),
        case("first_bad_row_named", async |c, db| {
            // Rows 2 and 4 are bad, staged in reverse order: the smallest row_no is named.
            let q = unique_name(db);
            let mut rows = three_good(db, &q, 1)?;
            let key = unique_bytes(db, "first");
            let mut late = Row::routed(0, req(&q).keys(None, Some(&key)), 1)?;
            late.digest = Some(vec![0; 32]);
            rows = with_bad_row(rows, 4, late);
            let mut early = Row::routed(0, req(&q).keys(Some(&key), None), 1)?;
            early.source = Some("concurrency_key".to_owned());
            rows = with_bad_row(rows, 2, early);
            rows.reverse();
            must_reject(
                c,
                db,
                &rows,
                "a batch with bad rows 2 and 5",
                "bulk_row_mismatch",
                2,
                vec![
                    ("field", Member::Eq(json!("route_source"))),
                    ("staged", Member::Eq(json!("concurrency_key"))),
                    ("computed", Member::Eq(json!("ordering_key"))),
                ],
            )
            .await?;
            Ok(())
        }),
        case("digest_mismatch_rejected", async |c, db| {
            let key = unique_bytes(db, "dig");
            mismatch(
                c,
                db,
                "a staged digest of the key without the tag's NUL byte",
                (None, Some(key.clone())),
                "concurrency_digest",
                move |r| {
                    let mut pre = b"awa:concurrency_key:v1".to_vec();
                    pre.extend_from_slice(&key);
                    // Any other digest is as wrong; this one is a real producer bug.
                    r.digest = Some(awa_conformance_core::concurrency_digest(&pre).to_vec());
                },
            )
            .await
        }),
        case("fallback_digest_required", async |c, db| {
            // Ordering key only: the digest of the ordering key must be stated (D3 fallback).
            let key = unique_bytes(db, "fb");
            mismatch(
                c,
                db,
                "an ordering-key row staged without its fallback digest",
                (Some(key), None),
                "concurrency_digest",
                |r| r.digest = None,
            )
            .await
        }),
        case("shard_off_by_one_rejected", async |c, db| {
            let key = unique_bytes(db, "sh");
            mismatch(
                c,
                db,
                "a staged concurrency shard off by one",
                (None, Some(key)),
                "enqueue_shard",
                |r| r.shard = r.shard.map(|s| (s + 1) % 8),
            )
            .await
        }),
        case("ordering_shard_off_by_one_rejected", async |c, db| {
            let key = unique_bytes(db, "osh");
            mismatch(
                c,
                db,
                "a staged ordering shard off by one",
                (Some(key), None),
                "enqueue_shard",
                |r| r.shard = r.shard.map(|s| (s + 7) % 8),
            )
            .await
        }),
        case("both_keys_ordering_key_wins", async |c, db| {
            // Ordering and concurrency key, staged with the concurrency key's route: the shard
            // is named, or the route source when the two shards coincide at width 8.
            let (ok, ck) = (unique_bytes(db, "bo"), unique_bytes(db, "bc"));
            let conc = Row::routed(0, req("x").keys(None, Some(&ck)), 8)?;
            let ord = Row::routed(0, req("x").keys(Some(&ok), Some(&ck)), 8)?;
            let field = if conc.shard == ord.shard {
                "route_source"
            } else {
                "enqueue_shard"
            };
            mismatch(
                c,
                db,
                "a row with both keys staged as routed by its concurrency key",
                (Some(ok), Some(ck)),
                field,
                move |r| {
                    r.shard = conc.shard;
                    r.source = conc.source;
                },
            )
            .await
        }),
        case("concurrency_key_route_source_required", async |c, db| {
            let key = unique_bytes(db, "crs");
            mismatch(
                c,
                db,
                "a concurrency-key row staged as routed by an ordering key",
                (None, Some(key)),
                "route_source",
                |r| r.source = Some("ordering_key".to_owned()),
            )
            .await
        }),
        case("rotor_row_with_shard_rejected", async |c, db| {
            // No producer can know the rotor's pick (v1.1): a stated shard is a mismatch.
            mismatch(
                c,
                db,
                "an unkeyed row staged with a shard",
                (None, None),
                "enqueue_shard",
                |r| r.shard = Some(0),
            )
            .await
        }),
        case("rotor_row_as_keyed_rejected", async |c, db| {
            mismatch(
                c,
                db,
                "an unkeyed row staged as concurrency_key",
                (None, None),
                "route_source",
                |r| r.source = Some("concurrency_key".to_owned()),
            )
            .await
        }),
        invalid(
            "unique_states_4_bits_rejected",
            "22026",
            "unique_states_not_8_bits",
            |r| {
                r.unique_key = Some(b"k".to_vec());
                r.unique_states = Some("1111".to_owned());
            },
        ),
        invalid("kind_201_chars_rejected", "23514", "kind_too_long", |r| {
            r.kind = "k".repeat(201);
        }),
        invalid("queue_201_chars_rejected", "23514", "queue_too_long", |r| {
            r.queue = format!("{}{}", r.queue, "q".repeat(201));
        }),
        invalid("priority_5_rejected", "23514", "priority_range", |r| {
            r.priority = 5;
        }),
        invalid(
            "max_attempts_0_rejected",
            "23514",
            "max_attempts_range",
            |r| {
                r.max_attempts = 0;
            },
        ),
        invalid("tags_21_rejected", "23514", "too_many_tags", |r| {
            r.tags = (0..21).map(|i| format!("t{i}")).collect();
        }),
        invalid("ordering_key_4097_rejected", "ZA003", "key_too_long", |r| {
            r.ordering_key = Some(vec![7; 4097]);
        }),
        invalid(
            "concurrency_key_4097_rejected",
            "ZA003",
            "key_too_long",
            |r| {
                r.concurrency_key = Some(vec![7; 4097]);
            },
        ),
        case("unique_within_batch_rejected", async |c, db| {
            let q = unique_name(db);
            let key = unique_bytes(db, "wb");
            let mut rows = three_good(db, &q, 1)?;
            for (at, states) in [(2, CLAIMING), (5, CLAIMING)] {
                let r = Row::routed(0, req(&q).unique(Some(&key), Some(states)), 1)?;
                rows = with_bad_row(rows, at, r);
            }
            must_reject(
                c,
                db,
                &rows,
                "two claims of one key in a batch",
                "bulk_unique_conflict",
                5,
                vec![("with_row", Member::Eq(json!(2)))],
            )
            .await?;
            Ok(())
        }),
        case("unique_within_batch_unclaimed_published", async |c, db| {
            // '10111111' excludes available: neither row claims, both publish; a third,
            // scheduled row claims (bit 0), and insert_job then collides with it.
            let q = unique_name(db);
            let key = unique_bytes(db, "wu");
            let rows = vec![
                Row::routed(1, req(&q).unique(Some(&key), Some("10111111")), 1)?,
                Row::routed(2, req(&q).unique(Some(&key), Some("10111111")), 1)?,
                Row::routed(
                    3,
                    req(&q).unique(Some(&key), Some("10111111")).run_at(FUTURE),
                    1,
                )?,
            ];
            must_publish(c, db, &rows, "a batch sharing a key it does not claim").await?;
            let (ins, _) = prepare(c, db).await?;
            let dup = req(&q).unique(Some(&key), Some(CLAIMING));
            c.batch_execute("SAVEPOINT dup")
                .await
                .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
            let res = insert(c, &ins, &dup).await;
            c.batch_execute("ROLLBACK TO SAVEPOINT dup")
                .await
                .map_err(|e| query_fail(db, "ROLLBACK TO SAVEPOINT", &e))?;
            let rej = rejection(
                db,
                "insert_job of a key a published scheduled row claims",
                res,
            )?;
            rej.expect(
                "insert_job of a key a published scheduled row claims",
                "23505",
                None,
                None,
            )
        }),
        case("unique_against_existing_rejected", async |c, db| {
            let q = unique_name(db);
            let key = unique_bytes(db, "ex");
            let (ins, _) = prepare(c, db).await?;
            insert(c, &ins, &req(&q).unique(Some(&key), Some(CLAIMING)))
                .await
                .map_err(|e| query_fail(db, "insert_job claiming the key first", &e))?;
            let bq = unique_name(db);
            let dup = Row::routed(0, req(&bq).unique(Some(&key), Some(CLAIMING)), 1)?;
            let rows = with_bad_row(three_good(db, &bq, 1)?, 3, dup);
            must_reject(
                c,
                db,
                &rows,
                "a batch row claiming a key insert_job holds",
                "bulk_unique_conflict",
                3,
                vec![("with_row", Member::Eq(Json::Null))],
            )
            .await?;
            Ok(())
        }),
        case("unique_across_batches_rejected", async |c, db| {
            let q = unique_name(db);
            let key = unique_bytes(db, "xb");
            let first = vec![Row::routed(
                1,
                req(&q).unique(Some(&key), Some(CLAIMING)),
                1,
            )?];
            must_publish(c, db, &first, "the first batch claiming a key").await?;
            let bq = unique_name(db);
            let dup = Row::routed(0, req(&bq).unique(Some(&key), Some(CLAIMING)), 1)?;
            let rows = with_bad_row(three_good(db, &bq, 1)?, 2, dup);
            must_reject(
                c,
                db,
                &rows,
                "a second batch claiming the same key",
                "bulk_unique_conflict",
                2,
                vec![("with_row", Member::Eq(Json::Null))],
            )
            .await?;
            Ok(())
        }),
        case("empty_batch_rejected", async |c, db| {
            let batch = batch_id(db);
            c.batch_execute("SAVEPOINT empty")
                .await
                .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
            let res = publish(c, db, &batch).await;
            c.batch_execute("ROLLBACK TO SAVEPOINT empty")
                .await
                .map_err(|e| query_fail(db, "ROLLBACK TO SAVEPOINT", &e))?;
            let rej = rejection(db, "publish_batch of a batch with no staged rows", res)?;
            rej.expect(
                "publish_batch of a batch with no staged rows",
                "ZA006",
                Some("bulk_batch_empty"),
                None,
            )?;
            rej.expect_detail(
                "publish_batch of a batch with no staged rows",
                &[("batch", Member::Eq(json!(batch)))],
            )
        }),
        Case::new("bulk", "staged_rows_never_commit", |db| never_commit(&db)).requires("bulk"),
        Case::new("bulk", "producer_stages_and_publishes", |db| {
            as_producer(&db)
        })
        .requires("bulk"),
    ]);
    out
}
