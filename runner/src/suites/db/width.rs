//! `sql::width::*`: the width rules and the advertised helper functions, at their limits.
//!
//! * `queue_meta` refuses widths 0 and 65 and accepts 1 and 64 (§4: widths are 1..=64).
//! * Keyed jobs on a queue without a `queue_meta` row route at width 1 (§4: no row = 1), with
//!   and without `opts`; the lookup is byte-exact (a row's width never reaches a queue whose
//!   name differs only in case or Unicode normalisation).
//! * The helpers: `ordering_shard` and `concurrency_shard` (when installed) at widths 1 and
//!   64 against the reference core, refusing 0 and 65 with `ZA004` and its DETAIL;
//!   `move_shard` (capability `move_shard`) on every retained shard × destination width,
//!   refusing widths 0 and 65 and retained shards outside 0..=63; `unique_states_bits`
//!   (capability `unique_states`) on every mask 0..=255, refusing -1 and 256.

use crate::pg::SqlText;
use std::sync::Arc;

use crate::contract::features::Feature;

use awa_conformance_core::{
    concurrency_digest, concurrency_shard, move_shard, ordering_shard, unique_states_bits, Route,
    RouteSource, Width,
};
use serde_json::json;
use tokio_postgres::types::ToSql;
use tokio_postgres::Client;

use super::case::{query_fail, rolled_back, Case};
use super::request::{insert_and_read_all, req, unique_name, width, Rows};
use super::DbSetup;
use crate::contract::expect::route_opts;
use crate::contract::judge::{judge_routing, rejection, Member, Rejection};
use crate::outcome::{CaseFailure, Verdict};
use awa_conformance_vectors::to_hex as hex;

/// Run one statement in a savepoint; an error leaves the case's transaction usable.
async fn in_savepoint(
    client: &Client,
    db: &DbSetup,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Result<u64, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT w")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = client.execute(sql, params).await;
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT w"
    } else {
        "ROLLBACK TO SAVEPOINT w"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}

/// A call that must fail; returns the rejection.
async fn refused(
    client: &Client,
    db: &DbSetup,
    label: &str,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Rejection, CaseFailure> {
    let res = in_savepoint(client, db, sql, params).await?;
    rejection(db, label, res)
}

/// ZA004 `invalid_width` with its DETAIL members (`width`, `min` 1, `max` 64).
fn expect_invalid_width(rej: &Rejection, label: &str, width: i64) -> Result<(), CaseFailure> {
    rej.expect(label, "ZA004", Some("invalid_width"), None)?;
    rej.expect_detail(
        label,
        &[
            ("width", Member::Eq(json!(width))),
            ("min", Member::Eq(json!(1))),
            ("max", Member::Eq(json!(64))),
        ],
    )
}

/// Which of `names` exist in the schema.
async fn present(
    client: &Client,
    db: &DbSetup,
    names: &[&str],
) -> Result<Vec<String>, CaseFailure> {
    let names: Vec<String> = names.iter().map(|s| (*s).to_owned()).collect();
    client
        .query_one(
            include_str!("../../../sql/helpers_present.sql"),
            &[&db.schema.as_str(), &names],
        )
        .await
        .map_err(|e| query_fail(db, "pg_proc", &e))?
        .try_get(0)
        .map_err(|e| CaseFailure::harness(format!("helpers_present: {e}")))
}

fn queue_meta_limits(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let sql = include_str!("../../../sql/queue_meta_insert.sql").in_schema(db.schema.quoted());
        let base = unique_name(db);
        for w in [1_i16, 64] {
            let q = format!("{base}_ok{w}");
            in_savepoint(client, db, &sql, &[&q, &w])
                .await?
                .map_err(|e| {
                    query_fail(db, &format!("queue_meta width {w} (must be accepted)"), &e)
                })?;
        }
        for w in [0_i16, 65, -1] {
            let q = format!("{base}_bad{w}");
            let label = format!("queue_meta row with enqueue_shards {w}");
            let rej = refused(client, db, &label, &sql, &[&q, &w]).await?;
            // A CHECK (23514) as released, or the contract's ZA004 from a trigger.
            if rej.sqlstate != "23514" && rej.sqlstate != "ZA004" {
                return Err(CaseFailure::mismatch(
                    format!("{label}: must be refused as a width outside 1..=64"),
                    json!({"sqlstate": "23514 (CHECK) or ZA004"}),
                    json!({"sqlstate": rej.sqlstate, "message": rej.message}),
                ));
            }
        }
        Ok(Verdict::Passed)
    })
}

/// Ordering key, concurrency key, expected route source, the key the digest is of.
type KeyedCase = (
    Option<&'static [u8]>,
    Option<&'static [u8]>,
    RouteSource,
    &'static [u8],
);

/// Keys whose shard at width 8 is not 0, so routing at any width but 1 shows.
const ORDERING: &[u8] = b"order-1";
const CONCURRENCY: &[u8] = b"tenant-42";

fn no_row_means_width_1(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        // A run-scoped queue that has no queue_meta row.
        let queue = unique_name(db);
        let cases: [KeyedCase; 3] = [
            (
                None,
                Some(CONCURRENCY),
                RouteSource::ConcurrencyKey,
                CONCURRENCY,
            ),
            (Some(ORDERING), None, RouteSource::OrderingKey, ORDERING),
            (
                Some(ORDERING),
                Some(CONCURRENCY),
                RouteSource::OrderingKey,
                CONCURRENCY,
            ),
        ];
        let mut reqs = Vec::new();
        let mut expects = Vec::new();
        for (ok, ck, source, digest_of) in cases {
            let e = Route {
                source,
                enqueue_shard: Some(0),
                concurrency_digest: Some(concurrency_digest(digest_of)),
            };
            reqs.push(req(&queue).keys(ok, ck));
            reqs.push(req(&queue).keys(ok, ck).opts(&route_opts(&e)));
            expects.push(e);
            expects.push(e);
        }
        let got = insert_and_read_all(client, db, &reqs, Rows::Counted).await?;
        for (i, ((ins, st), e)) in got.iter().zip(&expects).enumerate() {
            let with = if i % 2 == 0 { "no opts" } else { "opts" };
            judge_routing(
                &format!(
                    "{} key on a queue without a queue_meta row ({with})",
                    e.source.as_str()
                ),
                width(1)?,
                e,
                &ins.returned,
                st,
            )?;
        }
        Ok(Verdict::Passed)
    })
}

/// A queue's width is looked up by its name byte for byte (§4): a `queue_meta` row of width 8
/// for `…_Café` (NFC) never reaches `…_café` (case folded) or `…_Café` written with a
/// combining accent (NFD), which have no row and so have width 1: a keyed job there is stored
/// on shard 0, and an `opts` stating shard 0 is accepted. Only the shard is judged here, so
/// that a routing mistake (digest, shard arithmetic) fails the suites that check routing, and
/// this case fails only for the lookup.
fn queue_names_are_byte_exact(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        let sql = include_str!("../../../sql/queue_meta_insert.sql").in_schema(db.schema.quoted());
        client
            .execute(&sql, &[&format!("{base}_Caf\u{e9}"), &8_i16])
            .await
            .map_err(|e| query_fail(db, "queue_meta row of width 8", &e))?;
        let queues = [
            (format!("{base}_caf\u{e9}"), "its name case folded"),
            (format!("{base}_Cafe\u{301}"), "its name in NFD"),
        ];
        let mut reqs = Vec::new();
        let mut labels = Vec::new();
        for (q, what) in &queues {
            reqs.push(req(q).keys(None, Some(CONCURRENCY)));
            reqs.push(
                req(q)
                    .keys(None, Some(CONCURRENCY))
                    .opts(&json!({"expected_enqueue_shard": 0})),
            );
            labels.push(format!("{what} (no opts)"));
            labels.push(format!("{what} (opts stating shard 0)"));
        }
        let got = insert_and_read_all(client, db, &reqs, Rows::Counted).await?;
        for ((ins, st), label) in got.iter().zip(&labels) {
            let (returned, stored) = (ins.returned.enqueue_shard, st.enqueue_shard);
            if returned != Some(0) || stored != Some(0) {
                return Err(CaseFailure::mismatch(
                    format!(
                        "a keyed job on a queue without a queue_meta row, whose name differs \
                         from one with a row of width 8 only by {label}, must route at width 1 \
                         (shard 0): the width lookup is not byte-exact"
                    ),
                    json!({"enqueue_shard": 0}),
                    json!({"returned": returned, "stored": stored}),
                ));
            }
        }
        Ok(Verdict::Passed)
    })
}

/// Keys for the shard helpers: empty, short, one byte past a 64-byte block, high bytes.
fn helper_keys() -> Vec<Vec<u8>> {
    vec![
        Vec::new(),
        b"tenant-42".to_vec(),
        b"order-1".to_vec(),
        vec![0xff; 65],
        (0..=255u8).collect(),
    ]
}

fn shard_helpers(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let wanted = ["concurrency_digest", "concurrency_shard", "ordering_shard"];
        let have = present(client, db, &wanted).await?;
        if have.len() < wanted.len() {
            return Ok(Verdict::NotApplicable(format!(
                "{} lacks the optional helper(s) {}; insert_job's routing is checked by \
                 sql::function",
                db.schema.quoted(),
                wanted
                    .iter()
                    .filter(|w| !have.iter().any(|h| h == *w))
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        let s = db.schema.quoted();
        let keys = helper_keys();
        let widths: Vec<i32> = vec![1, 8, 63, 64];
        let rows = client
            .query(
                &include_str!("../../../sql/shard_helpers.sql").in_schema(s),
                &[&keys, &widths],
            )
            .await
            .map_err(|e| query_fail(db, "ordering_shard / concurrency_shard", &e))?;
        if rows.len() != keys.len() * widths.len() {
            return Err(CaseFailure::harness(format!(
                "shard_helpers returned {} rows, expected {}",
                rows.len(),
                keys.len() * widths.len()
            )));
        }
        for row in &rows {
            let n: i64 = row
                .try_get(0)
                .map_err(|e| CaseFailure::harness(e.to_string()))?;
            let w: i32 = row
                .try_get(1)
                .map_err(|e| CaseFailure::harness(e.to_string()))?;
            let got_os: Option<i32> = row
                .try_get(2)
                .map_err(|e| CaseFailure::new(e.to_string()))?;
            let got_cs: Option<i32> = row
                .try_get(3)
                .map_err(|e| CaseFailure::new(e.to_string()))?;
            let got_d: Option<Vec<u8>> = row
                .try_get(4)
                .map_err(|e| CaseFailure::new(e.to_string()))?;
            let key = usize::try_from(n - 1)
                .ok()
                .and_then(|i| keys.get(i))
                .ok_or_else(|| CaseFailure::harness(format!("key index {n}")))?;
            let width =
                Width::new(i64::from(w)).map_err(|e| CaseFailure::harness(e.to_string()))?;
            let digest = concurrency_digest(key);
            let want = json!({
                "ordering_shard": ordering_shard(key, width),
                "concurrency_shard": concurrency_shard(&digest, width),
                "concurrency_digest": hex(&digest),
            });
            let got = json!({
                "ordering_shard": got_os,
                "concurrency_shard": got_cs,
                "concurrency_digest": got_d.as_deref().map(hex),
            });
            if want != got {
                return Err(CaseFailure::mismatch(
                    format!(
                        "helpers on key {} at width {w} differ from the contract",
                        hex(key)
                    ),
                    want,
                    got,
                ));
            }
        }
        for w in [0_i32, 65, -1] {
            let label = format!("ordering_shard(key, {w})");
            let rej = refused(
                client,
                db,
                &label,
                &format!("SELECT {s}.ordering_shard($1::bytea, $2::integer)"),
                &[&b"k".as_slice(), &w],
            )
            .await?;
            expect_invalid_width(&rej, &label, i64::from(w))?;
            let label = format!("concurrency_shard(digest, {w})");
            let rej = refused(
                client,
                db,
                &label,
                &format!(
                    "SELECT {s}.concurrency_shard({s}.concurrency_digest($1::bytea), $2::integer)"
                ),
                &[&b"k".as_slice(), &w],
            )
            .await?;
            expect_invalid_width(&rej, &label, i64::from(w))?;
        }
        Ok(Verdict::Passed)
    })
}

/// An advertised helper that is missing is a failure, not "not applicable".
async fn must_exist(
    client: &Client,
    db: &DbSetup,
    name: &str,
    capability: &str,
) -> Result<(), CaseFailure> {
    if present(client, db, &[name]).await?.is_empty() {
        return Err(CaseFailure::new(format!(
            "{}.contract_capabilities() advertises {capability} but {}.{name} does not exist",
            db.schema.quoted(),
            db.schema.quoted()
        )));
    }
    Ok(())
}

fn move_shard_case(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        must_exist(client, db, "move_shard", "move_shard").await?;
        let s = db.schema.quoted();
        let got: Option<Vec<Option<i32>>> = client
            .query_one(
                &include_str!("../../../sql/move_shard_grid.sql").in_schema(s),
                &[],
            )
            .await
            .map_err(|e| query_fail(db, "move_shard over 0..=63 x 1..=64", &e))?
            .try_get(0)
            .map_err(|e| CaseFailure::new(format!("move_shard result: {e}")))?;
        let got = got.unwrap_or_default();
        let mut i = 0usize;
        for r in 0..=63_i64 {
            for w in 1..=64_i64 {
                let width = Width::new(w).map_err(|e| CaseFailure::harness(e.to_string()))?;
                let want = move_shard(r, width).map_err(|e| CaseFailure::harness(e.to_string()))?;
                let g = got.get(i).copied().flatten();
                if g != Some(i32::from(want)) {
                    return Err(CaseFailure::mismatch(
                        format!("move_shard({r}, {w}) must be retained mod destination width (§9)"),
                        json!(want),
                        json!(g),
                    ));
                }
                i += 1;
            }
        }
        if got.len() != i {
            return Err(CaseFailure::new(format!(
                "move_shard grid: {} values, expected {i}",
                got.len()
            )));
        }
        for w in [0_i32, 65] {
            let label = format!("move_shard(5, {w})");
            let rej = refused(
                client,
                db,
                &label,
                &format!("SELECT {s}.move_shard(5, $1::integer)"),
                &[&w],
            )
            .await?;
            expect_invalid_width(&rej, &label, i64::from(w))?;
        }
        // §9: a retained shard is in 0..=63; anything else must be refused, never mapped.
        for r in [-1_i32, 64] {
            let label = format!("move_shard({r}, 8)");
            refused(
                client,
                db,
                &label,
                &format!("SELECT {s}.move_shard($1::integer, 8)"),
                &[&r],
            )
            .await?;
        }
        Ok(Verdict::Passed)
    })
}

fn unique_states_bits_case(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        must_exist(client, db, "unique_states_bits", "unique_states").await?;
        let s = db.schema.quoted();
        let got: Option<Vec<Option<String>>> = client
            .query_one(
                &include_str!("../../../sql/unique_states_bits_all.sql").in_schema(s),
                &[],
            )
            .await
            .map_err(|e| query_fail(db, "unique_states_bits over 0..=255", &e))?
            .try_get(0)
            .map_err(|e| CaseFailure::new(format!("unique_states_bits result: {e}")))?;
        let got = got.unwrap_or_default();
        let want: Vec<Option<String>> = (0..=255u8).map(|m| Some(unique_states_bits(m))).collect();
        if got != want {
            let first = want
                .iter()
                .zip(got.iter().chain(std::iter::repeat(&None)))
                .position(|(w, g)| w != g)
                .unwrap_or(0);
            return Err(CaseFailure::mismatch(
                format!("unique_states_bits({first}) differs from §3 (character i from the left = bit 1<<i)"),
                json!(want.get(first)),
                json!(got.get(first)),
            ));
        }
        for m in [-1_i32, 256] {
            let label = format!("unique_states_bits({m})");
            refused(
                client,
                db,
                &label,
                &format!("SELECT {s}.unique_states_bits($1::integer)"),
                &[&m],
            )
            .await?;
        }
        Ok(Verdict::Passed)
    })
}

/// The `sql::width::*` cases.
pub(super) fn cases() -> Vec<Case> {
    vec![
        Case::new("width", "queue_meta_refuses_0_and_65", |db| {
            queue_meta_limits(&db)
        })
        .checks(&[Feature::Refusals]),
        Case::new(
            "width",
            "keyed_job_without_queue_meta_row_routes_at_width_1",
            |db| no_row_means_width_1(&db),
        ),
        Case::new("width", "queue_names_are_byte_exact", |db| {
            queue_names_are_byte_exact(&db)
        }),
        Case::new("width", "shard_helpers_at_widths_1_and_64", |db| {
            shard_helpers(&db)
        }),
        Case::new("width", "move_shard_helper", |db| move_shard_case(&db)).requires("move_shard"),
        Case::new("width", "unique_states_bits_helper", |db| {
            unique_states_bits_case(&db)
        })
        .requires("unique_states"),
    ]
}
