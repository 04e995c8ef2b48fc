//! `sql::uniqueness::*`: the released claim rule through `insert_job` (docs/contract.md §10,
//! rule 6; docs/released-awa.md R7), checked when the database lists the optional uniqueness
//! feature (`unique_key` and `unique_states`, §12.1).
//!
//! Each case uses a key unique to the run and case, inside a rolled-back transaction, so it
//! neither sees nor leaves claims of anyone else. The empty key is global by nature: if the
//! database already holds a claim on it, that case is not applicable.

use std::sync::Arc;

use serde_json::json;
use tokio_postgres::{Client, Statement};

use super::case::{query_fail, rolled_back, Case};
use super::request::{
    insert, prepare, read, req, unique_bytes, unique_name, InsertJob, Inserted, FUTURE,
};
use super::DbSetup;
use crate::contract::judge::{duplicate_claim, rejection};
use crate::outcome::{CaseFailure, Verdict};
use awa_conformance_vectors::to_hex as hex;

const ALL_STATES: &str = "11111111";
/// Released default mask (`0b0001_1111` → scheduled..retryable).
const DEFAULT_STATES: &str = "11111000";

/// One insert inside a savepoint, so an expected error leaves the transaction usable.
async fn attempt(
    client: &Client,
    st: &Statement,
    db: &DbSetup,
    req: &InsertJob,
) -> Result<Result<Inserted, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT u")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = insert(client, st, req).await;
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT u"
    } else {
        "ROLLBACK TO SAVEPOINT u"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}

async fn must_insert(
    client: &Client,
    st: &Statement,
    db: &DbSetup,
    req: &InsertJob,
    what: &str,
) -> Result<Inserted, CaseFailure> {
    attempt(client, st, db, req)
        .await?
        .map_err(|e| query_fail(db, &format!("{what} (must be accepted)"), &e))
}

/// A job with `run_at` in the future: it must be accepted, in state `scheduled`.
async fn must_schedule(
    client: &Client,
    st: &Statement,
    db: &DbSetup,
    req: &InsertJob,
) -> Result<Inserted, CaseFailure> {
    let job = must_insert(client, st, db, req, "scheduled insert").await?;
    if job.returned.state.as_deref() != Some("scheduled") {
        return Err(CaseFailure::mismatch(
            "run_at in the future must give state scheduled",
            json!("scheduled"),
            json!(job.returned.state),
        ));
    }
    Ok(job)
}

async fn must_collide(
    client: &Client,
    st: &Statement,
    db: &DbSetup,
    req: &InsertJob,
    what: &str,
) -> Result<(), CaseFailure> {
    let res = attempt(client, st, db, req).await?;
    let rej = rejection(db, what, res)?;
    duplicate_claim(what, &rej)
}

type Body = for<'a> fn(
    &'a Client,
    &'a Statement,
    &'a Statement,
    &'a Arc<DbSetup>,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Verdict, CaseFailure>> + 'a>,
>;

/// A case of the optional uniqueness feature (docs/contract.md §12: `unique_key` and
/// `unique_states`).
fn case(name: &'static str, body: Body) -> Case {
    Case::new("uniqueness", name, move |db| {
        rolled_back(&db, async |client| {
            let (ins, rd) = prepare(client, &db).await?;
            body(client, &ins, &rd, &db).await
        })
    })
    .requires("unique_key")
    .requires("unique_states")
}

/// The `sql::uniqueness::*` cases.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case("duplicate_key_rejected", |c, ins, _, db| {
            Box::pin(async move {
                let key = unique_bytes(db, "dup");
                let req = req(&unique_name(db)).unique(Some(&key), Some(DEFAULT_STATES));
                must_insert(c, ins, db, &req, "first insert").await?;
                must_collide(c, ins, db, &req, "second insert of the same key").await?;
                Ok(Verdict::Passed)
            })
        }),
        case(
            "mask_excluding_initial_state_takes_no_claim",
            |c, ins, _, db| {
                Box::pin(async move {
                    let key = unique_bytes(db, "mask");
                    let q = unique_name(db);
                    // available is bit 1: '10111111' excludes it, so no claim is taken.
                    let unclaimed = req(&q).unique(Some(&key), Some("10111111"));
                    must_insert(
                        c,
                        ins,
                        db,
                        &unclaimed,
                        "insert with a mask excluding available",
                    )
                    .await?;
                    must_insert(c, ins, db, &unclaimed, "same again").await?;
                    let claimed = req(&q).unique(Some(&key), Some(ALL_STATES));
                    must_insert(c, ins, db, &claimed, "claiming insert after unclaimed ones")
                        .await?;
                    must_collide(c, ins, db, &claimed, "second claiming insert").await?;
                    Ok(Verdict::Passed)
                })
            },
        ),
        case("scheduled_mask_without_scheduled_bit", |c, ins, rd, db| {
            Box::pin(async move {
                let key = unique_bytes(db, "sched");
                let q = unique_name(db);
                let scheduled = req(&q).unique(Some(&key), Some("01111000")).run_at(FUTURE);
                let job = must_schedule(c, ins, db, &scheduled).await?;
                let stored = read(c, rd, job.job_id)
                    .await
                    .map_err(|e| query_fail(db, "job_routing", &e))?;
                if stored.unique_states.as_deref() != Some("01111000") {
                    return Err(CaseFailure::mismatch(
                        "stored unique_states (bit(8) text, leftmost = scheduled)",
                        json!("01111000"),
                        json!(stored.unique_states),
                    ));
                }
                let available = req(&q).unique(Some(&key), Some(DEFAULT_STATES));
                must_insert(
                    c,
                    ins,
                    db,
                    &available,
                    "available insert after an unclaimed scheduled one",
                )
                .await?;
                must_collide(c, ins, db, &available, "second available insert").await?;
                Ok(Verdict::Passed)
            })
        }),
        case(
            "scheduled_with_scheduled_bit_takes_claim",
            |c, ins, _, db| {
                Box::pin(async move {
                    // Only the scheduled bit: a future job claims the key, a second one collides,
                    // and a job that starts available (bit unset) takes no claim.
                    let key = unique_bytes(db, "schedbit");
                    let q = unique_name(db);
                    let scheduled = req(&q).unique(Some(&key), Some("10000000")).run_at(FUTURE);
                    must_schedule(c, ins, db, &scheduled).await?;
                    // No run_at: available (§10 rule 3), a state the mask leaves unclaimed.
                    let now = req(&q).unique(Some(&key), Some("10000000"));
                    must_insert(c, ins, db, &now, "available insert, mask without its bit").await?;
                    must_collide(c, ins, db, &scheduled, "second scheduled insert").await?;
                    Ok(Verdict::Passed)
                })
            },
        ),
        case("null_states_stored_not_enforced", |c, ins, rd, db| {
            Box::pin(async move {
                let key = unique_bytes(db, "null");
                let req = req(&unique_name(db)).unique(Some(&key), None);
                let a = must_insert(c, ins, db, &req, "first insert, states NULL").await?;
                must_insert(c, ins, db, &req, "second insert, states NULL").await?;
                let stored = read(c, rd, a.job_id)
                    .await
                    .map_err(|e| query_fail(db, "job_routing", &e))?;
                if stored.unique_key.as_deref() == Some(&key[..]) && stored.unique_states.is_none()
                {
                    return Ok(Verdict::Passed);
                }
                Err(CaseFailure::mismatch(
                    "a key with NULL states is stored as given",
                    json!({"unique_key": hex(&key), "unique_states": null}),
                    json!({"unique_key": stored.unique_key.as_deref().map(hex), "unique_states": stored.unique_states}),
                ))
            })
        }),
        case("empty_key_enforced", |c, ins, _, db| {
            Box::pin(async move {
                let req = req(&unique_name(db)).unique(Some(b""), Some(ALL_STATES));
                let first = attempt(c, ins, db, &req).await?;
                if let Err(e) = &first {
                    if e.code().map(|s| s.code()) == Some("23505") {
                        return Ok(Verdict::NotApplicable(
                            "the database already holds a claim on the empty key".to_owned(),
                        ));
                    }
                }
                first.map_err(|e| query_fail(db, "first insert of the empty key", &e))?;
                must_collide(c, ins, db, &req, "second insert of the empty key").await?;
                Ok(Verdict::Passed)
            })
        }),
        case("same_key_other_queue_collides", |c, ins, _, db| {
            Box::pin(async move {
                let key = unique_bytes(db, "queues");
                let a = req(&unique_name(db)).unique(Some(&key), Some(ALL_STATES));
                let b = req(&unique_name(db)).unique(Some(&key), Some(ALL_STATES));
                must_insert(c, ins, db, &a, "insert in queue A").await?;
                must_collide(c, ins, db, &b, "same key in queue B").await?;
                Ok(Verdict::Passed)
            })
        }),
    ]
}
