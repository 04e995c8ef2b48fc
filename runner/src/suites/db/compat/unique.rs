//! `sql::compat::unique::<id>` and `sql::compat::claims::<id>`: unique_key storage
//! and the duplicate rule of released `insert_job_compat` for every state mask. Every release
//! with `insert_job_compat` keeps both on either engine (docs/released-awa.md R8.2), so these
//! run on 0.5.x and on 0.6.x before queue storage is activated too, read back from `jobs_hot`
//! and `scheduled_jobs` there.

use std::sync::Arc;

use awa_conformance_core::{unique_states_bits, DEFAULT_UNIQUE_STATES};
use awa_conformance_vectors::{Case as VCase, VectorSet};
use serde_json::json;

use super::{attempt, call, case, claims, compat_insert, prepare_insert, stored, CompatReturned};
use crate::contract::judge::rejection;
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::suites::db::case::{query_fail, rolled_back, Case};
use crate::suites::db::request::{unique_bytes, unique_name};
use awa_conformance_vectors::to_hex as hex;

/// The initial states an insert can start in under queue storage (and the canonical engine
/// takes too) that take claims: the job is inserted `available`, then (another key)
/// `scheduled`.
const INITIAL_STATES: [&str; 2] = ["available", "scheduled"];

/// One case per unique_key vector: its key is stored byte-exact and claimed.
pub(super) fn unique_key_cases(vectors: &VectorSet) -> Vec<Case> {
    vectors
        .iter()
        .filter_map(|(_, v)| match &v.case {
            VCase::UniqueKey(c) => {
                let key = c.unique_key.to_vec();
                Some(case("unique", &v.id, move |db| unique_key_case(&db, &key)))
            }
            _ => None,
        })
        .collect()
}

fn unique_key_case(db: &Arc<DbSetup>, key: &[u8]) -> Result<Verdict, CaseFailure> {
    let q = db.stored_in()?;
    let states = unique_states_bits(DEFAULT_UNIQUE_STATES);
    rolled_back(db, async |client| {
        // A claim someone already holds on this key would make the insert a duplicate.
        if !claims(client, db, key).await?.is_empty() {
            return Ok(Verdict::NotApplicable(format!(
                "the database already holds a uniqueness claim on {}",
                hex(key)
            )));
        }
        let queue = unique_name(db);
        let st = prepare_insert(client, db).await?;
        let ret = compat_insert(client, &st, &call(&queue).unique(key, &states))
            .await
            .map_err(|e| query_fail(db, "insert_job_compat with the vector's unique_key", &e))?;
        let rows = stored(client, db, &q, &[ret.job_id], std::slice::from_ref(&queue)).await?;
        let got = rows.get(&ret.job_id);
        let holders = claims(client, db, key).await?;
        let ok = ret.unique_key.as_deref() == Some(key)
            && ret.unique_states.as_deref() == Some(states.as_str())
            && got.is_some_and(|s| {
                s.unique_key.as_deref() == Some(key)
                    && s.unique_states.as_deref() == Some(states.as_str())
            })
            && holders == [ret.job_id];
        if ok {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "the unique_key must be returned, stored and claimed byte-exact",
            json!({"unique_key_hex": hex(key), "unique_states": states,
                   "claimed_by": [ret.job_id]}),
            json!({"returned": {"unique_key_hex": ret.unique_key.as_deref().map(hex),
                                "unique_states": ret.unique_states},
                   "stored": got.map(|s| json!({"unique_key_hex": s.unique_key.as_deref().map(hex),
                                                "unique_states": s.unique_states})),
                   "claimed_by": holders}),
        ))
    })
}

/// One case per unique_states vector (every mask).
pub(super) fn unique_states_cases(vectors: &VectorSet) -> Vec<Case> {
    vectors
        .iter()
        .filter_map(|(_, v)| match &v.case {
            VCase::UniqueStates(c) => {
                let (bits, states) = (c.bits.clone(), c.states.clone());
                Some(case("claims", &v.id, move |db| {
                    mask_case(&db, &bits, &states)
                }))
            }
            _ => None,
        })
        .collect()
}

/// For each initial state: insert A, then B with the same key and mask. B must be refused
/// with 23505 on `idx_awa_jobs_unique` exactly when the vector lists A's state; A's states are
/// stored as given and A holds the claim exactly then.
fn mask_case(db: &Arc<DbSetup>, bits: &str, states: &[String]) -> Result<Verdict, CaseFailure> {
    let q = db.stored_in()?;
    rolled_back(db, async |client| {
        let st = prepare_insert(client, db).await?;
        for state in INITIAL_STATES {
            let queue = unique_name(db);
            let key = unique_bytes(db, "compat_mask");
            let call = call(&queue).state(state).unique(&key, bits);
            let a: CompatReturned = compat_insert(client, &st, &call)
                .await
                .map_err(|e| query_fail(db, &format!("first {state} insert (mask {bits})"), &e))?;
            let claimed = states.iter().any(|s| s == state);
            let rows = stored(client, db, &q, &[a.job_id], std::slice::from_ref(&queue)).await?;
            let got = rows.get(&a.job_id);
            let holders = claims(client, db, &key).await?;
            let want_holders = if claimed { vec![a.job_id] } else { Vec::new() };
            let want_place = if state == "available" {
                "ready"
            } else {
                "deferred"
            };
            if a.state.as_deref() != Some(state)
                || got.is_none_or(|s| {
                    s.place != want_place || s.unique_states.as_deref() != Some(bits)
                })
                || holders != want_holders
            {
                return Err(CaseFailure::mismatch(
                    format!(
                        "a {state} job with unique_states {bits} must be stored with them, and \
                         hold the claim exactly when the mask lists {state}"
                    ),
                    json!({"state": state, "place": want_place, "unique_states": bits,
                           "claimed_by": want_holders}),
                    json!({"state": a.state,
                           "stored": got.map(|s| json!({"place": s.place,
                                                        "unique_states": s.unique_states})),
                           "claimed_by": holders}),
                ));
            }
            let what = format!("a second {state} insert with the same key and mask {bits}");
            let b = attempt(client, &st, db, &call).await?;
            if claimed {
                let rej = rejection(db, &what, b)?;
                crate::contract::judge::duplicate_claim(&what, &rej)?;
            } else if let Err(e) = b {
                return Err(query_fail(
                    db,
                    &format!("{what} (the mask does not list {state}: no claim, so accepted)"),
                    &e,
                ));
            }
        }
        Ok(Verdict::Passed)
    })
}
