//! `sql::race::*`: concurrent producers inserting one unique key: exactly one wins.
//!
//! This suite must commit (a claim only blocks other sessions once committed), so it uses
//! its own run-scoped queue and removes its rows and claims afterwards, pass or fail.

use std::sync::Arc;

use serde_json::json;

use super::support::{harness, insert, insert_sql, query_fail, sweep, unique_bytes, Case, Req};
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};

/// Concurrent connections (the environment preflight counts them).
pub(super) const RACERS: usize = 8;

async fn race(db: &Arc<DbSetup>, queue: &str) -> Result<(Vec<i64>, Verdict), CaseFailure> {
    // Open and prepare every connection first so the inserts start together.
    let clients = futures_util::future::try_join_all((0..RACERS).map(|_| db.pg.connect()))
        .await
        .map_err(harness)?;
    let sql = insert_sql(db);
    let stmts = futures_util::future::join_all(clients.iter().map(|c| c.prepare(&sql))).await;
    let mut prepared = Vec::with_capacity(RACERS);
    for (c, st) in clients.iter().zip(stmts) {
        prepared.push((
            c,
            st.map_err(|e| query_fail(db, "preparing insert_job", &e))?,
        ));
    }
    let key = unique_bytes(db, "race");
    let req = Req::on(queue).unique(Some(&key), Some("11111000"));
    let results =
        futures_util::future::join_all(prepared.iter().map(|(c, st)| insert(c, st, &req))).await;
    let mut winners = Vec::new();
    let mut duplicates = 0usize;
    let mut other = Vec::new();
    for r in results {
        match r {
            Ok(ins) => winners.push(ins.job_id),
            Err(e) => match e.as_db_error() {
                Some(d)
                    if d.code().code() == "23505"
                        && d.constraint() == Some("idx_awa_jobs_unique") =>
                {
                    duplicates += 1;
                }
                _ if super::support::is_harness_error(&e) => {
                    sweep(db, queue, &winners, None).await.map_err(harness)?;
                    return Err(query_fail(db, "racing insert", &e));
                }
                _ => other.push(db.pg.describe(&e)),
            },
        }
    }
    if winners.len() == 1 && duplicates == RACERS - 1 {
        return Ok((winners, Verdict::Passed));
    }
    let failure = CaseFailure::mismatch(
        format!("{RACERS} concurrent inserts of one unique key: exactly one must win"),
        json!({"winners": 1, "duplicates_23505": RACERS - 1}),
        json!({"winners": winners.len(), "duplicates_23505": duplicates, "other_errors": other}),
    );
    // Clean up the winners even though the case failed.
    sweep(db, queue, &winners, None).await.map_err(harness)?;
    Err(failure)
}

/// The `sql::race::*` cases.
pub(super) fn cases() -> Vec<Case> {
    vec![Case::new("race", "concurrent_same_unique_key", |db| {
        let queue = format!("{}_race", db.prefix());
        let outcome = db.pg.block_on(race(&db, &queue)).map_err(harness)?;
        let (ids, verdict) = outcome?;
        db.pg
            .block_on(sweep(&db, &queue, &ids, None))
            .map_err(harness)?
            .map_err(harness)?;
        Ok(verdict)
    })]
}
