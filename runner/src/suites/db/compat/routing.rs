//! `sql::compat::ordering::w<width>` and `sql::compat::partitioned::<id>`: ordering-key
//! routing of released `insert_job_compat`, read back from queue storage. Not applicable on
//! 0.5.x (no `p_ordering_key`, no queue storage) nor on the canonical engine (no enqueue shard),
//! with the reason naming the version ([`crate::contract::released::Released::no_enqueue_shard`]).

use crate::pg::SqlText;
use std::sync::Arc;

use awa_conformance_core::{ordering_shard, physical_queue_name, Width, MAX_WIDTH};
use awa_conformance_vectors::{Case as VCase, VectorSet};
use serde_json::json;

use super::{call, case, compat_insert, prepare_insert, stored};
use crate::contract::expect::{self, RouteAt};
use crate::contract::target::{DbSetup, StoredIn};
use crate::outcome::{CaseFailure, Verdict};
use crate::suites::db::case::{query_fail, rolled_back, setup_fail, Case};
use crate::suites::db::request::{set_widths, unique_name, width_queue};

/// The width of every physical queue of the partition cases.
const PARTITION_WIDTH: u8 = 8;

/// (vector id, key, the route it expects at each width 1..=64: the one expectation's).
type Keys = Vec<(String, Vec<u8>, Vec<RouteAt>)>;

/// One case per width 1..=64, each inserting every ordering_shard vector's key.
pub(super) fn ordering_cases(vectors: &VectorSet) -> Vec<Case> {
    let keys: Arc<Keys> = Arc::new(
        vectors
            .iter()
            .filter_map(|(_, v)| match &v.case {
                VCase::OrderingShard(c) => Some((
                    v.id.clone(),
                    c.key.clone(),
                    expect::routes(&v.case, &expect::every_width())?,
                )),
                _ => None,
            })
            .collect(),
    );
    (1..=MAX_WIDTH)
        .map(|w| {
            let keys = Arc::clone(&keys);
            case("ordering", &format!("w{w}"), move |db| {
                ordering_at(&db, w, &keys)
            })
        })
        .collect()
}

fn ordering_at(db: &Arc<DbSetup>, width: u8, keys: &Keys) -> Result<Verdict, CaseFailure> {
    let q = match db.storage()? {
        Ok(q) => StoredIn::QueueStorage(q),
        Err(why) => return Ok(Verdict::NotApplicable(why)),
    };
    if keys.is_empty() {
        return Err(CaseFailure::harness(
            "the vector set holds no ordering_shard vector",
        ));
    }
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[width]).await?;
        let queue = width_queue(&base, width);
        let st = prepare_insert(client, db).await?;
        let mut ids = Vec::with_capacity(keys.len());
        for (id, key, _) in keys {
            let call = call(&queue).ordering(key);
            let ret = compat_insert(client, &st, &call)
                .await
                .map_err(|e| query_fail(db, &format!("insert_job_compat for {id}"), &e))?;
            ids.push(ret.job_id);
        }
        let rows = stored(client, db, &q, &ids, std::slice::from_ref(&queue)).await?;
        let mut wrong = Vec::new();
        for ((id, key, routes), job) in keys.iter().zip(&ids) {
            let want = routes
                .iter()
                .find(|r| r.width == width)
                .and_then(|r| r.route.enqueue_shard)
                .ok_or_else(|| {
                    CaseFailure::harness(format!("{id} has no shard at width {width}"))
                })?;
            let got = rows.get(job);
            let ok = got.is_some_and(|s| {
                s.place == "ready" && s.enqueue_shard == Some(i16::from(want)) && s.queue == queue
            });
            if !ok {
                wrong.push((
                    id.clone(),
                    json!({"key_hex": awa_conformance_vectors::to_hex(key), "enqueue_shard": want}),
                    json!(got.map(|s| json!({"place": s.place, "queue": s.queue,
                        "enqueue_shard": s.enqueue_shard}))),
                ));
            }
        }
        if wrong.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!(
                "{} of {} ordering keys stored at the wrong enqueue shard at width {width} \
                 (first: {})",
                wrong.len(),
                keys.len(),
                wrong.first().map_or("", |w| w.0.as_str())
            ),
            json!(wrong
                .iter()
                .map(|w| json!({"vector": w.0, "expected": w.1}))
                .collect::<Vec<_>>()),
            json!(wrong
                .iter()
                .map(|w| json!({"vector": w.0, "stored": w.2}))
                .collect::<Vec<_>>()),
        ))
    })
}

/// One case per partition vector: the job goes to the vector's physical queue (of a
/// run-scoped logical queue) with its key as ordering key, and must be stored there, at the
/// key's ordering shard.
pub(super) fn partition_cases(vectors: &VectorSet) -> Vec<Case> {
    vectors
        .iter()
        .filter_map(|(_, v)| match &v.case {
            VCase::Partition(c) => {
                let (key, partition) = (c.key.clone(), c.partition);
                Some(case("partitioned", &v.id, move |db| {
                    partition_case(&db, &key, partition)
                }))
            }
            _ => None,
        })
        .collect()
}

fn partition_case(db: &Arc<DbSetup>, key: &[u8], partition: u16) -> Result<Verdict, CaseFailure> {
    let q = match db.storage()? {
        Ok(q) => StoredIn::QueueStorage(q),
        Err(why) => return Ok(Verdict::NotApplicable(why)),
    };
    let width =
        Width::new(i64::from(PARTITION_WIDTH)).map_err(|e| CaseFailure::harness(e.to_string()))?;
    let want_shard = ordering_shard(key, width);
    rolled_back(db, async |client| {
        let physical = physical_queue_name(&format!("{}_pt", unique_name(db)), partition);
        client
            .execute(
                &include_str!("../../../../sql/queue_meta_insert.sql")
                    .in_schema(db.schema.quoted()),
                &[&physical, &i16::from(PARTITION_WIDTH)],
            )
            .await
            .map_err(|e| setup_fail(db, "setting queue_meta.enqueue_shards", &e))?;
        let st = prepare_insert(client, db).await?;
        let ret = compat_insert(client, &st, &call(&physical).ordering(key))
            .await
            .map_err(|e| query_fail(db, "insert_job_compat into the physical queue", &e))?;
        let rows = stored(
            client,
            db,
            &q,
            &[ret.job_id],
            std::slice::from_ref(&physical),
        )
        .await?;
        let got = rows.get(&ret.job_id);
        let ok = ret.queue.as_deref() == Some(physical.as_str())
            && got.is_some_and(|s| {
                s.place == "ready" && s.enqueue_shard == Some(i16::from(want_shard))
            });
        if ok {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!(
                "the job routed to physical queue {physical} (partition {partition}) must be \
                 stored there at its key's ordering shard (width {PARTITION_WIDTH})"
            ),
            json!({"queue": physical, "place": "ready", "enqueue_shard": want_shard}),
            json!({"returned_queue": ret.queue,
                   "stored": got.map(|s| json!({"queue": s.queue, "place": s.place,
                       "enqueue_shard": s.enqueue_shard}))}),
        ))
    })
}
