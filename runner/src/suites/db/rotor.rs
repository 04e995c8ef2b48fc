//! `sql::rotor::*`: unkeyed jobs route by the rotor: any shard in `[0, width)`, source
//! `rotor`, no digest, at several widths, returned and stored alike.

use serde_json::json;

use super::case::{rolled_back, Case};
use awa_conformance_core::{Route, RouteSource};

use super::request::{
    insert_and_read_all, req, set_widths, unique_name, width, width_queue, InsertJob, Rows,
};
use crate::contract::judge::judge_routing;
use crate::outcome::Verdict;

/// Widths covering 1, powers of two, odd and prime widths, and the maximum.
const WIDTHS: [u8; 9] = [1, 2, 3, 5, 7, 8, 16, 63, 64];
/// Jobs per width (a rotor may vary per call; each must be in range).
const PER_WIDTH: usize = 4;

/// The `sql::rotor::*` cases.
pub(super) fn cases() -> Vec<Case> {
    WIDTHS
        .iter()
        .map(|&w| {
            Case::new("rotor", &format!("unkeyed_width_{w}"), move |db| {
                rolled_back(&db, async |client| {
                    let base = unique_name(&db);
                    set_widths(client, &db, &base, &[w]).await?;
                    let route = Route {
                        source: RouteSource::Rotor,
                        enqueue_shard: None,
                        concurrency_digest: None,
                    };
                    let at = width(w)?;
                    let queue = width_queue(&base, w);
                    let mut reqs: Vec<InsertJob> = (0..PER_WIDTH).map(|_| req(&queue)).collect();
                    // `expectations` is mandatory (docs/contract.md §12).
                    reqs.push(req(&queue).opts(&json!({
                        "expected_route_source": "rotor",
                        "expected_concurrency_digest": null,
                    })));
                    for (i, (ins, stored)) in insert_and_read_all(client, &db, &reqs, Rows::Counted)
                        .await?
                        .iter()
                        .enumerate()
                    {
                        judge_routing(
                            &format!("unkeyed job {i} at width {w}"),
                            at,
                            &route,
                            &ins.returned,
                            stored,
                        )?;
                    }
                    Ok(Verdict::Passed)
                })
            })
            .requires("job_routing")
        })
        .collect()
}
