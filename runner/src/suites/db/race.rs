//! `sql::race::*`: a unique claim held by an open transaction blocks a second producer until
//! the holder commits, and the second producer then gets `23505`. Deterministic, not a
//! timing race:
//!
//! 1. Session A: `BEGIN`, `insert_job` with key K (all state bits): A holds an uncommitted
//!    claim.
//! 2. Session B (autocommit, its own `lock_timeout`/`statement_timeout`): `insert_job` with K.
//! 3. A watcher session polls `pg_blocking_pids(B)` until it contains A. A claim enforced by a
//!    unique index (or any lock) makes B wait there. A check-then-insert claim cannot see A's
//!    uncommitted row, so B returns at once, *succeeding*, while A is still open: caught on
//!    every run, however the two cores schedule the sessions.
//! 4. A commits; B must end with `23505` on `idx_awa_jobs_unique`.
//!
//! Every wait is bounded ([`BLOCK_BOUND`], B's own timeouts, and the run's work timeout). The
//! suite commits (a claim only blocks other sessions once it exists outside a rolled-back
//! transaction), so it uses its own run-scoped queue and removes its rows and claims
//! afterwards, pass or fail.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::{select, Either};
use serde_json::json;
use tokio_postgres::Client;

use super::case::{harness, is_harness_error, query_fail, Case};
use super::request::{insert, insert_sql, req, unique_bytes};
use super::sweep::sweep;
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};

/// How long B may take to show up as blocked by A.
const BLOCK_BOUND: Duration = Duration::from_secs(10);
/// How often the watcher looks.
const POLL: Duration = Duration::from_millis(5);
/// B's own bound on waiting for A (milliseconds): longer than [`BLOCK_BOUND`], so a correct
/// implementation is never cut short, yet B can never wait forever.
const B_TIMEOUT_MS: u64 = 20_000;

/// What session B observed.
enum Outcome {
    /// B waited for A and, after A committed, got this result.
    Blocked(Result<i64, tokio_postgres::Error>),
    /// B finished while A still held its uncommitted claim.
    Early(Result<i64, tokio_postgres::Error>),
    /// B neither finished nor waited on A within [`BLOCK_BOUND`].
    Neither,
}

async fn pid(c: &Client, db: &DbSetup) -> Result<i32, CaseFailure> {
    c.query_one("SELECT pg_catalog.pg_backend_pid()", &[])
        .await
        .map_err(|e| query_fail(db, "pg_backend_pid()", &e))?
        .try_get(0)
        .map_err(|e| CaseFailure::harness(format!("pg_backend_pid(): {e}")))
}

/// Steps 1-4; returns the job ids that may have been committed (for the sweep) and B's
/// outcome.
async fn hold_and_collide(
    db: &Arc<DbSetup>,
    queue: &str,
    ids: &mut Vec<i64>,
) -> Result<Outcome, CaseFailure> {
    let (a, b, watch) =
        futures_util::future::try_join3(db.pg.connect(), db.pg.connect(), db.pg.connect())
            .await
            .map_err(harness)?;
    let sql = insert_sql(db);
    let (sa, sb) = futures_util::future::join(a.prepare(&sql), b.prepare(&sql)).await;
    let sa = sa.map_err(|e| query_fail(db, "preparing insert_job", &e))?;
    let sb = sb.map_err(|e| query_fail(db, "preparing insert_job", &e))?;
    b.batch_execute(&format!(
        "SET lock_timeout = {B_TIMEOUT_MS}; SET statement_timeout = {B_TIMEOUT_MS}"
    ))
    .await
    .map_err(|e| query_fail(db, "bounding session B", &e))?;
    let (a_pid, b_pid) = (pid(&a, db).await?, pid(&b, db).await?);

    let key = unique_bytes(db, "race");
    let req = req(queue).unique(Some(&key), Some("11111111"));
    a.batch_execute("BEGIN")
        .await
        .map_err(|e| query_fail(db, "BEGIN (session A)", &e))?;
    let held = insert(&a, &sa, &req)
        .await
        .map_err(|e| query_fail(db, "session A's insert_job (must be accepted)", &e))?;
    ids.push(held.job_id);

    let mut b_call = Box::pin(insert(&b, &sb, &req));
    let deadline = Instant::now() + BLOCK_BOUND;
    let outcome = loop {
        let tick = Box::pin(tokio::time::sleep(POLL));
        // The select's result borrows `b_call`: keep it inside this statement.
        let finished = match select(b_call.as_mut(), tick).await {
            Either::Left((res, _)) => Some(res.map(|i| i.job_id)),
            Either::Right(_) => None,
        };
        if let Some(res) = finished {
            break Outcome::Early(res);
        }
        let blocked: bool = watch
            .query_one(
                "SELECT $1::integer = ANY (pg_catalog.pg_blocking_pids($2::integer))",
                &[&a_pid, &b_pid],
            )
            .await
            .map_err(|e| query_fail(db, "pg_blocking_pids", &e))?
            .try_get(0)
            .map_err(|e| CaseFailure::harness(format!("pg_blocking_pids: {e}")))?;
        if blocked {
            a.batch_execute("COMMIT")
                .await
                .map_err(|e| query_fail(db, "COMMIT (session A)", &e))?;
            break Outcome::Blocked(b_call.as_mut().await.map(|i| i.job_id));
        }
        if Instant::now() > deadline {
            break Outcome::Neither;
        }
    };
    // Whatever happened, end A (a no-op after COMMIT) before judging, so B is released.
    let _ = a.batch_execute("ROLLBACK").await;
    Ok(outcome)
}

fn is_duplicate(e: &tokio_postgres::Error) -> bool {
    crate::contract::judge::Rejection::of(e).is_some_and(|r| r.is_duplicate_claim())
}

fn judge(db: &DbSetup, outcome: Outcome, ids: &mut Vec<i64>) -> Result<Verdict, CaseFailure> {
    match outcome {
        Outcome::Blocked(Err(e)) if is_duplicate(&e) => Ok(Verdict::Passed),
        Outcome::Blocked(Err(e)) | Outcome::Early(Err(e)) if is_harness_error(&e) => {
            Err(query_fail(db, "session B's insert_job", &e))
        }
        Outcome::Blocked(res) => {
            if let Ok(id) = &res {
                ids.push(*id);
            }
            Err(CaseFailure::mismatch(
                "a second insert of a key whose claim was committed while it waited must \
                 raise 23505 on idx_awa_jobs_unique",
                json!({"session_b": "23505 idx_awa_jobs_unique"}),
                json!({"session_b": describe(db, &res)}),
            ))
        }
        Outcome::Early(res) => {
            if let Ok(id) = &res {
                ids.push(*id);
            }
            Err(CaseFailure::mismatch(
                "while session A held an uncommitted claim on a key, session B's insert of the \
                 same key finished without waiting for A: the claim is not enforced atomically \
                 (check-then-insert); use a unique index on the key",
                json!({"session_b": "waits for A, then 23505 idx_awa_jobs_unique"}),
                json!({"session_b": describe(db, &res)}),
            ))
        }
        Outcome::Neither => Err(CaseFailure::harness(format!(
            "session B neither finished nor waited on session A within {BLOCK_BOUND:?}: the \
             server is overloaded or B waits on something else; rerun"
        ))),
    }
}

fn describe(db: &DbSetup, res: &Result<i64, tokio_postgres::Error>) -> String {
    match res {
        Ok(id) => format!("accepted as job {id}"),
        Err(e) => db.pg.describe(e),
    }
}

/// The `sql::race::*` cases.
pub(super) fn cases() -> Vec<Case> {
    vec![
        Case::new("race", "second_claim_waits_for_holder_then_23505", |db| {
            let queue = format!("{}_race", db.prefix());
            let mut ids = Vec::new();
            let outcome = db
                .pg
                .block_on(hold_and_collide(&db, &queue, &mut ids))
                .map_err(harness);
            let verdict = match outcome {
                Ok(Ok(o)) => judge(&db, o, &mut ids),
                Ok(Err(f)) | Err(f) => Err(f),
            };
            // Remove both sessions' rows and claims, pass or fail.
            db.pg
                .block_on(sweep(&db, &queue, &ids, None))
                .map_err(harness)?
                .map_err(harness)?;
            verdict
        })
        .requires("unique_key")
        .requires("unique_states"),
    ]
}
