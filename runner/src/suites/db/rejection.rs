//! `sql::rejection::*`: every contract and released validation error, with its exact SQLSTATE,
//! DETAIL `code` (ZA*), message prefix / released message and HINT.

use std::sync::Arc;

use awa_conformance_core::{concurrency_digest, concurrency_shard, Width};
use serde_json::json;

use super::support::{
    hex, insert, prepare, query_fail, rejection, rolled_back, set_widths, unique_name, width_queue,
    Case, Req,
};
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};

/// What a rejected call must raise.
#[derive(Clone, Copy)]
struct Want {
    sqlstate: &'static str,
    code: Option<&'static str>,
    message: Option<&'static str>,
}

const fn contract(sqlstate: &'static str, code: &'static str) -> Want {
    Want {
        sqlstate,
        code: Some(code),
        message: None,
    }
}

const fn released(message: &'static str) -> Want {
    Want {
        sqlstate: "23514",
        code: None,
        message: Some(message),
    }
}

const KIND_MSG: &str = "job kind length must be <= 200 characters";
const QUEUE_MSG: &str = "queue name length must be <= 200 characters";
const PRIORITY_MSG: &str = "priority must be between 1 and 4";
const ATTEMPTS_MSG: &str = "max_attempts must be between 1 and 1000";
const TAGS_MSG: &str = "job tags must contain at most 20 values";

/// Build the request for a case: the queue (width 8) is given; the builder adjusts it.
type Build = fn(Req) -> Req;

fn shard_at_8(key: &[u8]) -> u8 {
    Width::new(8)
        .map(|w| concurrency_shard(&concurrency_digest(key), w))
        .unwrap_or(0)
}

/// Insert one request on a width-8 queue and check the rejection.
fn run(db: &Arc<DbSetup>, name: &str, build: Build, want: Want) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let req = build(Req::on(&width_queue(&base, 8)));
        let (st, _) = prepare(client, db).await?;
        let res = insert(client, &st, &req).await;
        rejection(db, name, res)?.expect(name, want.sqlstate, want.code, want.message)?;
        Ok(Verdict::Passed)
    })
}

/// Insert one request that must be accepted (boundary values next to a rejection).
fn run_accepted(db: &Arc<DbSetup>, name: &str, build: Build) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let req = build(Req::on(&width_queue(&base, 8)));
        let (st, _) = prepare(client, db).await?;
        insert(client, &st, &req)
            .await
            .map_err(|e| query_fail(db, &format!("{name} (must be accepted)"), &e))?;
        Ok(Verdict::Passed)
    })
}

fn long_key() -> Vec<u8> {
    vec![b'k'; 4097]
}

fn rejected_cases() -> Vec<(&'static str, Build, Want, Option<&'static str>)> {
    const MISMATCH: &str = "ZA001";
    vec![
        (
            "expected_digest_mismatch",
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(
                    &json!({"expected_concurrency_digest": hex(&concurrency_digest(b"tenant-2"))}),
                )
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_digest_null_but_keyed",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_concurrency_digest": null}))
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_digest_of_ordering_key_ignores_fallback",
            // Ordering key only: the stored digest is the ordering key's (fallback), so
            // expecting "no digest" must fail.
            |r| {
                r.keys(Some(b"order-1"), None)
                    .opts(&json!({"expected_concurrency_digest": null}))
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_shard_mismatch",
            |r| {
                let wrong = (shard_at_8(b"tenant-1") + 1) % 8;
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_enqueue_shard": wrong}))
            },
            contract(MISMATCH, "expected_enqueue_shard_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_shard_out_of_range",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_enqueue_shard": 64}))
            },
            contract(MISMATCH, "expected_enqueue_shard_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_route_source_mismatch",
            |r| {
                r.keys(Some(b"order-1"), Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "concurrency_key"}))
            },
            contract(MISMATCH, "expected_route_source_mismatch"),
            Some("expectations"),
        ),
        (
            "expected_route_source_rotor_but_keyed",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "rotor"}))
            },
            contract(MISMATCH, "expected_route_source_mismatch"),
            Some("expectations"),
        ),
        (
            "unknown_opts_key",
            |r| r.opts(&json!({"expected_shard": 1})),
            contract("ZA002", "unknown_opts_key"),
            None,
        ),
        (
            "unknown_opts_key_beside_known",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "concurrency_key", "priority_hint": 1}))
            },
            contract("ZA002", "unknown_opts_key"),
            None,
        ),
        (
            "opts_not_object_array",
            |r| r.opts(&json!([])),
            contract("ZA002", "opts_not_object"),
            None,
        ),
        (
            "opts_not_object_json_null",
            |r| r.opts(&json!(null)),
            contract("ZA002", "opts_not_object"),
            None,
        ),
        (
            "opts_not_object_string",
            |r| r.opts(&json!("expected_enqueue_shard")),
            contract("ZA002", "opts_not_object"),
            None,
        ),
        (
            "invalid_opts_value_shard_string",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": "3"}))
            },
            contract("ZA005", "invalid_opts_value"),
            Some("expectations"),
        ),
        (
            "invalid_opts_value_shard_float",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": 1.5}))
            },
            contract("ZA005", "invalid_opts_value"),
            Some("expectations"),
        ),
        (
            "invalid_opts_value_digest_uppercase",
            |r| {
                r.keys(None, Some(b"t")).opts(&json!({
                    "expected_concurrency_digest": hex(&concurrency_digest(b"t")).to_uppercase()
                }))
            },
            contract("ZA005", "invalid_opts_value"),
            Some("expectations"),
        ),
        (
            "invalid_opts_value_digest_number",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_concurrency_digest": 7}))
            },
            contract("ZA005", "invalid_opts_value"),
            Some("expectations"),
        ),
        (
            "invalid_opts_value_route_source",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_route_source": "shard"}))
            },
            contract("ZA005", "invalid_opts_value"),
            Some("expectations"),
        ),
        (
            "ordering_key_too_long",
            |r| r.keys(Some(&long_key()), None),
            contract("ZA003", "key_too_long"),
            None,
        ),
        (
            "concurrency_key_too_long",
            |r| r.keys(None, Some(&long_key())),
            contract("ZA003", "key_too_long"),
            None,
        ),
        (
            "kind_too_long",
            |mut r| {
                r.kind = "k".repeat(201);
                r
            },
            released(KIND_MSG),
            None,
        ),
        (
            "kind_too_long_counts_characters",
            |mut r| {
                r.kind = "é".repeat(201);
                r
            },
            released(KIND_MSG),
            None,
        ),
        (
            "queue_too_long",
            |mut r| {
                r.queue = "q".repeat(201);
                r
            },
            released(QUEUE_MSG),
            None,
        ),
        (
            "priority_0",
            |mut r| {
                r.priority = 0;
                r
            },
            released(PRIORITY_MSG),
            None,
        ),
        (
            "priority_5",
            |mut r| {
                r.priority = 5;
                r
            },
            released(PRIORITY_MSG),
            None,
        ),
        (
            "max_attempts_0",
            |mut r| {
                r.max_attempts = 0;
                r
            },
            released(ATTEMPTS_MSG),
            None,
        ),
        (
            "max_attempts_1001",
            |mut r| {
                r.max_attempts = 1001;
                r
            },
            released(ATTEMPTS_MSG),
            None,
        ),
        (
            "tags_21",
            |mut r| {
                r.tags = (0..21).map(|i| format!("t{i}")).collect();
                r
            },
            released(TAGS_MSG),
            None,
        ),
        (
            "released_order_priority_before_max_attempts",
            |mut r| {
                r.priority = 0;
                r.max_attempts = 0;
                r
            },
            released(PRIORITY_MSG),
            None,
        ),
        (
            "released_order_kind_before_queue",
            |mut r| {
                r.kind = "k".repeat(201);
                r.queue = "q".repeat(201);
                r
            },
            released(KIND_MSG),
            None,
        ),
        (
            "released_validation_before_opts",
            // Released checks run before opts: a bad priority wins over an unknown key.
            |mut r| {
                r.priority = 9;
                r.opts(&json!({"bogus": true}))
            },
            released(PRIORITY_MSG),
            None,
        ),
    ]
}

fn accepted_cases() -> Vec<(&'static str, Build)> {
    vec![
        ("accepts_key_of_4096_bytes", |r| {
            r.keys(Some(&[b'o'; 4096]), Some(&[b'c'; 4096]))
        }),
        ("accepts_kind_of_200_characters", |mut r| {
            r.kind = "é".repeat(200);
            r
        }),
        ("accepts_20_tags", |mut r| {
            r.tags = (0..20).map(|i| format!("t{i}")).collect();
            r
        }),
        ("accepts_priority_and_attempt_bounds", |mut r| {
            r.priority = 4;
            r.max_attempts = 1000;
            r
        }),
        ("accepts_empty_opts_object", |r| r.opts(&json!({}))),
    ]
}

/// The `sql::rejection::*` cases, plus `invalid_width` through the pure helpers.
pub(super) fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = rejected_cases()
        .into_iter()
        .map(|(name, build, want, cap)| {
            let c = Case::new("rejection", name, move |db| run(&db, name, build, want));
            match cap {
                Some(cap) => c.requires(cap),
                None => c,
            }
        })
        .collect();
    out.extend(accepted_cases().into_iter().map(|(name, build)| {
        Case::new("rejection", name, move |db| run_accepted(&db, name, build))
    }));
    out.push(Case::new("rejection", "invalid_width", |db| {
        rolled_back(&db, async |client| {
            // The width helpers are optional surface: without them ZA004 is only reachable
            // with a dropped CHECK, which a conformance run must not do to a live schema.
            let helpers: i64 = client
                .query_one(
                    include_str!("../../../sql/width_helpers_count.sql"),
                    &[&db.schema],
                )
                .await
                .map_err(|e| query_fail(&db, "pg_proc", &e))?
                .get(0);
            if helpers < 2 {
                return Ok(Verdict::NotApplicable(format!(
                    "{}.concurrency_shard / ordering_shard helpers are not installed; ZA004 is \
                     not reachable through insert_job while queue_meta's CHECK holds",
                    db.s()
                )));
            }
            let s = db.s();
            for (sql, label) in [
                (format!("SELECT {s}.concurrency_shard({s}.concurrency_digest('k'::bytea), 0)"), "concurrency_shard(width 0)"),
                (format!("SELECT {s}.concurrency_shard({s}.concurrency_digest('k'::bytea), 65)"), "concurrency_shard(width 65)"),
                (format!("SELECT {s}.ordering_shard('k'::bytea, 0)"), "ordering_shard(width 0)"),
                (format!("SELECT {s}.ordering_shard('k'::bytea, -1)"), "ordering_shard(width -1)"),
            ] {
                client.batch_execute("SAVEPOINT w").await.map_err(|e| query_fail(&db, "SAVEPOINT", &e))?;
                let res = client.query_one(&sql, &[]).await.map(|r| format!("{r:?}"));
                let rej = rejection(&db, label, res)?;
                client.batch_execute("ROLLBACK TO SAVEPOINT w").await.map_err(|e| query_fail(&db, "ROLLBACK TO SAVEPOINT", &e))?;
                if rej.sqlstate != "ZA004" || rej.detail_code.as_deref() != Some("invalid_width") {
                    return Err(CaseFailure::mismatch(
                        format!("{label}: wrong rejection"),
                        json!({"sqlstate": "ZA004", "detail.code": "invalid_width"}),
                        json!({"sqlstate": rej.sqlstate, "detail.code": rej.detail_code, "message": rej.message}),
                    ));
                }
            }
            Ok(Verdict::Passed)
        })
    }));
    out
}
