//! `sql::function::<vector id>`: routing and unique_key vectors through `<schema>.insert_job`.
//!
//! Every routing_precedence, concurrency_digest, concurrency_shard and ordering_shard vector
//! is inserted at every width it covers (one run-scoped queue per width, its
//! `queue_meta.enqueue_shards` set inside the case's transaction): at odd widths without
//! `opts`, at even widths with every expectation stated in `opts` (single-width vectors:
//! both). concurrency_digest vectors cover every width 1..=64 too: the digest must be the
//! same at each width and the shard must be the core's concurrency shard. The returned
//! routing and the stored routing (`job_routing`) must both equal the vector. unique_key
//! vectors are inserted with `p_unique_key` = the expected key and must come back (returned
//! and stored) byte-exact.
//!
//! The same checks also run as the least-privilege login role (`sql::privilege::function::*`,
//! see `privilege.rs`) on queues whose widths were committed beforehand.

use std::sync::Arc;

use crate::contract::features::Feature;

use awa_conformance_vectors::{Case as VCase, Family, VectorSet};

use serde_json::json;

use super::case::{rolled_back, Case};
use super::request::{
    insert_and_read_all, req, set_widths, unique_name, width, width_queue, InsertJob, Rows, FUTURE,
    PAST,
};
use crate::contract::expect::{every_width, route_opts, routes, RouteAt};
use crate::contract::judge::judge_routing;
use crate::outcome::{CaseFailure, Verdict};
use awa_conformance_vectors::to_hex as hex;

/// The capability a family's DB cases need, if the schema advertises capabilities per family.
pub(super) fn capability(family: Family) -> &'static str {
    family.as_str()
}

/// A routing vector at every width it covers (one for routing_precedence, 1..=64 for the
/// others), as the contract layer derives it ([`routes`]).
pub(super) struct RouteCase {
    expects: Vec<RouteAt>,
}

/// One function-suite case: a routing vector or a unique_key vector.
pub(super) enum FnCase {
    /// Routing at one or more widths.
    Route(RouteCase),
    /// A unique_key stored byte-exact.
    UniqueKey(Vec<u8>),
}

/// Run one case on `client` (inside the caller's transaction). `committed_base`: queues
/// `<base>_w<width>` whose widths are already committed (the least-privilege run, whose role
/// cannot write `queue_meta`); `None` sets the widths inside the transaction.
pub(super) async fn check_case(
    client: &tokio_postgres::Client,
    db: &super::DbSetup,
    id: &str,
    case: &FnCase,
    committed_base: Option<&str>,
) -> Result<(), CaseFailure> {
    match case {
        FnCase::Route(rc) => check_route(client, db, id, rc, committed_base).await,
        FnCase::UniqueKey(key) => check_unique_key(client, db, id, key, committed_base).await,
    }
}

/// A check on queues committed beforehand runs as the producer's login (the privilege suite),
/// which reads no table: its rows are counted by the same vector's own function case.
fn rows_of(committed_base: Option<&str>) -> Rows {
    if committed_base.is_some() {
        Rows::NotVisible
    } else {
        Rows::Counted
    }
}

async fn check_route(
    client: &tokio_postgres::Client,
    db: &super::DbSetup,
    id: &str,
    rc: &RouteCase,
    committed_base: Option<&str>,
) -> Result<(), CaseFailure> {
    let base = match committed_base {
        Some(b) => b.to_owned(),
        None => {
            let base = unique_name(db);
            let widths: Vec<u8> = rc.expects.iter().map(|e| e.width).collect();
            set_widths(client, db, &base, &widths).await?;
            base
        }
    };
    // Each width is inserted once; every other width states all expectations in opts
    // (both paths are covered at every width parity; single-width vectors get both).
    // `expectations` is in the mandatory core (docs/contract.md §12), so opts are always sent.
    let single = rc.expects.len() == 1;
    let mut plan: Vec<(usize, bool)> = Vec::with_capacity(rc.expects.len() + 1);
    for (i, e) in rc.expects.iter().enumerate() {
        if single {
            plan.push((i, false));
            plan.push((i, true));
        } else {
            plan.push((i, e.width % 2 == 0));
        }
    }
    let reqs: Vec<InsertJob> = plan
        .iter()
        .filter_map(|(i, opts)| {
            let e = rc.expects.get(*i)?;
            // Priorities 1..=4 and run_at absent / past / future vary across the requests,
            // so every stored priority and initial state is read back and compared too.
            let r = req(&width_queue(&base, e.width))
                .keys(e.ordering_key.as_deref(), e.concurrency_key.as_deref())
                .priority(1 + i16::from(e.width % 4));
            let r = match e.width % 3 {
                0 => r.run_at(FUTURE),
                1 => r.run_at(PAST),
                _ => r,
            };
            Some(if *opts {
                r.opts(&route_opts(&e.route))
            } else {
                r
            })
        })
        .collect();
    let got = insert_and_read_all(client, db, &reqs, rows_of(committed_base)).await?;
    for ((i, opts), (ins, stored)) in plan.iter().zip(got.iter()) {
        let e = rc
            .expects
            .get(*i)
            .ok_or_else(|| CaseFailure::harness(format!("{id}: result {i} has no expectation")))?;
        let label = if *opts {
            format!("{id} (opts with every expectation)")
        } else {
            format!("{id} (no opts)")
        };
        judge_routing(&label, width(e.width)?, &e.route, &ins.returned, stored)?;
    }
    Ok(())
}

async fn check_unique_key(
    client: &tokio_postgres::Client,
    db: &super::DbSetup,
    id: &str,
    key: &[u8],
    committed_base: Option<&str>,
) -> Result<(), CaseFailure> {
    let queue = committed_base.map_or_else(|| unique_name(db), |b| width_queue(b, 1));
    // No unique_states: the key is stored but takes no claim (released rule), so the
    // vector's key cannot collide with claims already in the database.
    let req = req(&queue).unique(Some(key), None);
    let got = insert_and_read_all(
        client,
        db,
        std::slice::from_ref(&req),
        rows_of(committed_base),
    )
    .await?;
    let (ins, stored) = got
        .first()
        .ok_or_else(|| CaseFailure::harness(format!("{id}: no result row")))?;
    if ins.returned.unique_key.as_deref() == Some(key) && stored.unique_key.as_deref() == Some(key)
    {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!("{id}: unique_key not stored byte-exact"),
        json!({"unique_key_hex": hex(key)}),
        json!({
            "returned": ins.returned.unique_key.as_deref().map(hex),
            "stored": stored.unique_key.as_deref().map(hex),
        }),
    ))
}

/// Every function-suite case: (family, vector id, case).
pub(super) fn fn_cases(vectors: &VectorSet) -> Vec<(Family, String, Arc<FnCase>)> {
    vectors
        .iter()
        .filter_map(|(family, v)| {
            let case = if let Some(expects) = routes(&v.case, &every_width()) {
                FnCase::Route(RouteCase { expects })
            } else if let VCase::UniqueKey(c) = &v.case {
                FnCase::UniqueKey(c.unique_key.to_vec())
            } else {
                return None;
            };
            Some((family, v.id.clone(), Arc::new(case)))
        })
        .collect()
}

/// One case per routing / unique_key vector.
pub(super) fn cases(vectors: &VectorSet) -> Vec<Case> {
    fn_cases(vectors)
        .into_iter()
        .map(|(family, id, case)| {
            Case::new("function", &id.clone(), move |db| {
                rolled_back(&db, async |client| {
                    check_case(client, &db, &id, &case, None).await
                })
                .map(|()| Verdict::Passed)
            })
            .checks(Feature::of_vector(family, false).as_slice())
            .requires(capability(family))
            .requires("job_routing")
        })
        .collect()
}
