//! `sql::rejection::*`: every contract and released validation error, with its exact SQLSTATE,
//! DETAIL `code` and every DETAIL member the error table lists (ZA*), message prefix /
//! released message and HINT; and the accepted side of each limit (lengths in characters, the
//! bounds themselves, NULL arguments meaning their defaults, past and future `run_at`), each
//! read back so the stored queue, priority and state are checked too. Cases come from every
//! limit and rule the contract states: letter case, lengths, NULLs and near-misses, not only
//! the obvious example.

use crate::pg::SqlText;
use std::sync::Arc;

use awa_conformance_core::{concurrency_digest, concurrency_shard, Width};
use serde_json::{json, Value as Json};

use super::case::{query_fail, rolled_back, Case};
use super::request::{
    insert, insert_and_read_all, prepare, read, req, set_widths, unique_name, width_queue,
    InsertJob, Rows, FUTURE, PAST,
};
use super::DbSetup;
use crate::contract::judge::{rejection, Member};
use crate::outcome::{CaseFailure, Verdict};
use awa_conformance_vectors::to_hex as hex;

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

pub(super) const KIND_MSG: &str = "job kind length must be <= 200 characters";
pub(super) const QUEUE_MSG: &str = "queue name length must be <= 200 characters";
pub(super) const PRIORITY_MSG: &str = "priority must be between 1 and 4";
pub(super) const ATTEMPTS_MSG: &str = "max_attempts must be between 1 and 1000";
pub(super) const TAGS_MSG: &str = "job tags must contain at most 20 values";

/// The three v1 `opts` keys (the `allowed` member of `unknown_opts_key`).
const OPTS_KEYS: &[&str] = &[
    "expected_concurrency_digest",
    "expected_enqueue_shard",
    "expected_route_source",
];

/// Build the request for a case: the queue (width 8) is given; the builder adjusts it.
type Build = fn(InsertJob) -> InsertJob;

/// The DETAIL members (besides `code`) a rejection must carry (schema/README.md error table).
type Detail = fn() -> Vec<(&'static str, Member)>;

fn shard_at_8(key: &[u8]) -> u8 {
    Width::new(8)
        .map(|w| concurrency_shard(&concurrency_digest(key), w))
        .unwrap_or(0)
}

fn digest_hex(key: &[u8]) -> Json {
    json!(hex(&concurrency_digest(key)))
}

fn none() -> Vec<(&'static str, Member)> {
    Vec::new()
}

/// The digest of `key` with one bit of its first (or last) byte flipped: an expectation that
/// differs from the right digest in one byte, so only a comparison of the whole value refuses
/// it.
fn off_by_one_byte(key: &[u8], last: bool) -> [u8; 32] {
    let mut d = concurrency_digest(key);
    let byte = if last { d.last_mut() } else { d.first_mut() };
    if let Some(b) = byte {
        *b ^= 1;
    }
    d
}

fn mismatch(expected: Json, actual: Json) -> Vec<(&'static str, Member)> {
    vec![
        ("expected", Member::Eq(expected)),
        ("actual", Member::Eq(actual)),
    ]
}

fn unknown_key(key: &'static str) -> Vec<(&'static str, Member)> {
    vec![
        ("key", Member::Eq(json!(key))),
        ("allowed", Member::Set(OPTS_KEYS)),
    ]
}

fn invalid_value(key: &'static str) -> Vec<(&'static str, Member)> {
    vec![
        ("key", Member::Eq(json!(key))),
        ("expected_type", Member::Text),
    ]
}

fn too_long(field: &'static str) -> Vec<(&'static str, Member)> {
    vec![
        ("field", Member::Eq(json!(field))),
        ("length", Member::Eq(json!(4097))),
        ("max", Member::Eq(json!(4096))),
    ]
}

fn not_object(actual_type: &'static str) -> Vec<(&'static str, Member)> {
    vec![("actual_type", Member::Eq(json!(actual_type)))]
}

/// Insert one request on a width-8 queue and check the rejection and its DETAIL.
fn run(
    db: &Arc<DbSetup>,
    name: &str,
    build: Build,
    want: Want,
    detail: Detail,
) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let req = build(req(&width_queue(&base, 8)));
        let (st, _) = prepare(client, db).await?;
        let res = insert(client, &st, &req).await;
        let rej = rejection(db, name, res)?;
        rej.expect(name, want.sqlstate, want.code, want.message)?;
        rej.expect_detail(name, &detail())?;
        Ok(Verdict::Passed)
    })
}

/// Insert one request that must be accepted (boundary values next to a rejection), then read
/// it back: queue, priority and initial state, returned and stored, must be as requested.
fn run_accepted(db: &Arc<DbSetup>, name: &str, build: Build) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let req = build(req(&width_queue(&base, 8)));
        insert_and_read_all(client, db, std::slice::from_ref(&req), Rows::Counted)
            .await
            .map_err(|f| CaseFailure {
                message: format!("{name} (must be accepted): {}", f.message),
                ..f
            })?;
        Ok(Verdict::Passed)
    })
}

/// Every argument but `p_kind` NULL: each means its default (§10 rule 1), read back.
fn null_arguments(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let row = client
            .query_one(
                &include_str!("../../../sql/insert_job_nulls.sql").in_schema(db.schema.quoted()),
                &[],
            )
            .await
            .map_err(|e| query_fail(db, "insert_job with every argument but p_kind NULL", &e))?;
        let job_id: i64 = row
            .try_get(0)
            .map_err(|e| CaseFailure::new(format!("insert_job result job_id: {e}")))?;
        let (_, rd) = prepare(client, db).await?;
        let stored = read(client, &rd, job_id)
            .await
            .map_err(|e| query_fail(db, "job_routing", &e))?;
        let returned = json!({
            "queue": row.try_get::<_, Option<String>>(1).ok().flatten(),
            "state": row.try_get::<_, Option<String>>(2).ok().flatten(),
            "priority": row.try_get::<_, Option<i16>>(3).ok().flatten(),
            "route_source": row.try_get::<_, Option<String>>(4).ok().flatten(),
        });
        let stored = json!({
            "queue": stored.queue,
            "state": stored.state,
            "priority": stored.priority,
            "route_source": stored.route_source,
        });
        let want = json!({
            "queue": "default", "state": "available", "priority": 2, "route_source": "rotor",
        });
        if returned == want && stored == want {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "NULL arguments must mean their defaults (queue 'default', priority 2, run_at now, \
             opts {})",
            want,
            json!({"returned": returned, "stored": stored}),
        ))
    })
}

fn long_key() -> Vec<u8> {
    vec![b'k'; 4097]
}

/// One rejected request: name, request, error, DETAIL members, the capability it needs.
type Rejected = (&'static str, Build, Want, Detail, Option<&'static str>);

#[expect(
    clippy::too_many_lines,
    reason = "one table of cases; each row is short and independent"
)]
fn rejected_cases() -> Vec<Rejected> {
    const MISMATCH: &str = "ZA001";
    const EXP: Option<&str> = Some("expectations");
    vec![
        (
            "expected_digest_mismatch",
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(
                    &json!({"expected_concurrency_digest": hex(&concurrency_digest(b"tenant-2"))}),
                )
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            || mismatch(digest_hex(b"tenant-2"), digest_hex(b"tenant-1")),
            EXP,
        ),
        (
            "expected_digest_differs_in_the_last_byte",
            // Compared on less than its full value (a prefix), this expectation would hold.
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(
                    &json!({"expected_concurrency_digest": hex(&off_by_one_byte(b"tenant-1", true))}),
                )
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            || {
                mismatch(
                    json!(hex(&off_by_one_byte(b"tenant-1", true))),
                    digest_hex(b"tenant-1"),
                )
            },
            EXP,
        ),
        (
            "expected_digest_differs_in_the_first_byte",
            // Compared on less than its full value (a suffix), this expectation would hold.
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(
                    &json!({"expected_concurrency_digest": hex(&off_by_one_byte(b"tenant-1", false))}),
                )
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            || {
                mismatch(
                    json!(hex(&off_by_one_byte(b"tenant-1", false))),
                    digest_hex(b"tenant-1"),
                )
            },
            EXP,
        ),
        (
            "expected_digest_null_but_keyed",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_concurrency_digest": null}))
            },
            contract(MISMATCH, "expected_concurrency_digest_mismatch"),
            || mismatch(Json::Null, digest_hex(b"tenant-1")),
            EXP,
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
            || mismatch(Json::Null, digest_hex(b"order-1")),
            EXP,
        ),
        (
            "expected_shard_mismatch",
            |r| {
                let wrong = (shard_at_8(b"tenant-1") + 1) % 8;
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_enqueue_shard": wrong}))
            },
            contract(MISMATCH, "expected_enqueue_shard_mismatch"),
            || {
                let right = shard_at_8(b"tenant-1");
                mismatch(json!((right + 1) % 8), json!(right))
            },
            EXP,
        ),
        (
            "expected_correct_digest_and_source_wrong_shard",
            // Every other expectation right: the shard alone must still be compared.
            |r| {
                let wrong = (shard_at_8(b"tenant-1") + 3) % 8;
                r.keys(None, Some(b"tenant-1")).opts(&json!({
                    "expected_concurrency_digest": hex(&concurrency_digest(b"tenant-1")),
                    "expected_enqueue_shard": wrong,
                    "expected_route_source": "concurrency_key",
                }))
            },
            contract(MISMATCH, "expected_enqueue_shard_mismatch"),
            || {
                let right = shard_at_8(b"tenant-1");
                mismatch(json!((right + 3) % 8), json!(right))
            },
            EXP,
        ),
        (
            "expected_shard_out_of_range",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_enqueue_shard": 64}))
            },
            contract(MISMATCH, "expected_enqueue_shard_mismatch"),
            || mismatch(json!(64), json!(shard_at_8(b"tenant-1"))),
            EXP,
        ),
        (
            "expected_route_source_mismatch",
            |r| {
                r.keys(Some(b"order-1"), Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "concurrency_key"}))
            },
            contract(MISMATCH, "expected_route_source_mismatch"),
            || mismatch(json!("concurrency_key"), json!("ordering_key")),
            EXP,
        ),
        (
            "expected_route_source_rotor_but_keyed",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "rotor"}))
            },
            contract(MISMATCH, "expected_route_source_mismatch"),
            || mismatch(json!("rotor"), json!("concurrency_key")),
            EXP,
        ),
        (
            "unknown_opts_key",
            |r| r.opts(&json!({"expected_shard": 1})),
            contract("ZA002", "unknown_opts_key"),
            || unknown_key("expected_shard"),
            None,
        ),
        (
            "unknown_opts_key_beside_known",
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"expected_route_source": "concurrency_key", "priority_hint": 1}))
            },
            contract("ZA002", "unknown_opts_key"),
            || unknown_key("priority_hint"),
            None,
        ),
        (
            "unknown_opts_key_letter_case",
            // Keys are case-sensitive: a known key in other letter case is unknown.
            |r| {
                r.keys(None, Some(b"tenant-1"))
                    .opts(&json!({"Expected_Route_Source": "concurrency_key"}))
            },
            contract("ZA002", "unknown_opts_key"),
            || unknown_key("Expected_Route_Source"),
            None,
        ),
        (
            "opts_not_object_array",
            |r| r.opts(&json!([])),
            contract("ZA002", "opts_not_object"),
            || not_object("array"),
            None,
        ),
        (
            "opts_not_object_json_null",
            |r| r.opts(&json!(null)),
            contract("ZA002", "opts_not_object"),
            || not_object("null"),
            None,
        ),
        (
            "opts_not_object_string",
            |r| r.opts(&json!("expected_enqueue_shard")),
            contract("ZA002", "opts_not_object"),
            || not_object("string"),
            None,
        ),
        (
            "invalid_opts_value_shard_string",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": "3"}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_enqueue_shard"),
            EXP,
        ),
        (
            "invalid_opts_value_shard_float",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": 1.5}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_enqueue_shard"),
            EXP,
        ),
        (
            "invalid_opts_value_shard_integral_float",
            // `3.0` is a float, not an integer (§10 opts table), even though it equals 3.
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": 3.0}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_enqueue_shard"),
            EXP,
        ),
        (
            "invalid_opts_value_shard_null",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": null}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_enqueue_shard"),
            EXP,
        ),
        (
            "invalid_opts_value_digest_uppercase",
            |r| {
                r.keys(None, Some(b"t")).opts(&json!({
                    "expected_concurrency_digest": hex(&concurrency_digest(b"t")).to_uppercase()
                }))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_concurrency_digest"),
            EXP,
        ),
        (
            "invalid_opts_value_digest_63_hex",
            |r| {
                let mut h = hex(&concurrency_digest(b"t"));
                h.pop();
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_concurrency_digest": h}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_concurrency_digest"),
            EXP,
        ),
        (
            "invalid_opts_value_digest_66_hex",
            // The right digest followed by one more byte: a near-miss past the 64 characters.
            |r| {
                let h = format!("{}00", hex(&concurrency_digest(b"t")));
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_concurrency_digest": h}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_concurrency_digest"),
            EXP,
        ),
        (
            "invalid_opts_value_digest_number",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_concurrency_digest": 7}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_concurrency_digest"),
            EXP,
        ),
        (
            "invalid_opts_value_route_source",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_route_source": "shard"}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_route_source"),
            EXP,
        ),
        (
            "invalid_opts_value_route_source_letter_case",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_route_source": "Concurrency_Key"}))
            },
            contract("ZA005", "invalid_opts_value"),
            || invalid_value("expected_route_source"),
            EXP,
        ),
        (
            "ordering_key_too_long",
            |r| r.keys(Some(&long_key()), None),
            contract("ZA003", "key_too_long"),
            || too_long("ordering_key"),
            None,
        ),
        (
            "concurrency_key_too_long",
            |r| r.keys(None, Some(&long_key())),
            contract("ZA003", "key_too_long"),
            || too_long("concurrency_key"),
            None,
        ),
        (
            "concurrency_key_too_long_beside_ordering_key_at_limit",
            |r| r.keys(Some(&[b'o'; 4096]), Some(&long_key())),
            contract("ZA003", "key_too_long"),
            || too_long("concurrency_key"),
            None,
        ),
        (
            "kind_too_long",
            |mut r| {
                r.kind = "k".repeat(201);
                r
            },
            released(KIND_MSG),
            none,
            None,
        ),
        (
            "kind_too_long_counts_characters",
            |mut r| {
                r.kind = "é".repeat(201);
                r
            },
            released(KIND_MSG),
            none,
            None,
        ),
        (
            "queue_too_long",
            |mut r| {
                r.queue = "q".repeat(201);
                r
            },
            released(QUEUE_MSG),
            none,
            None,
        ),
        (
            "queue_too_long_counts_characters",
            |mut r| {
                r.queue = "é".repeat(201);
                r
            },
            released(QUEUE_MSG),
            none,
            None,
        ),
        (
            "priority_0",
            |r| r.priority(0),
            released(PRIORITY_MSG),
            none,
            None,
        ),
        (
            "priority_5",
            |r| r.priority(5),
            released(PRIORITY_MSG),
            none,
            None,
        ),
        (
            "max_attempts_0",
            |mut r| {
                r.max_attempts = 0;
                r
            },
            released(ATTEMPTS_MSG),
            none,
            None,
        ),
        (
            "max_attempts_1001",
            |mut r| {
                r.max_attempts = 1001;
                r
            },
            released(ATTEMPTS_MSG),
            none,
            None,
        ),
        (
            "tags_21",
            |mut r| {
                r.tags = (0..21).map(|i| format!("t{i}")).collect();
                r
            },
            released(TAGS_MSG),
            none,
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
            none,
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
            none,
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
            none,
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
        ("accepts_queue_of_200_characters", |mut r| {
            // 200 characters, 400 bytes: the limit counts characters.
            r.queue = "é".repeat(200);
            r
        }),
        ("accepts_20_tags", |mut r| {
            r.tags = (0..20).map(|i| format!("t{i}")).collect();
            r
        }),
        ("accepts_priority_4_and_max_attempts_1000", |mut r| {
            r.max_attempts = 1000;
            r.priority(4)
        }),
        ("accepts_priority_1_and_max_attempts_1", |mut r| {
            r.max_attempts = 1;
            r.priority(1)
        }),
        ("accepts_empty_opts_object", |r| r.opts(&json!({}))),
        ("past_run_at_stores_scheduled", |r| {
            r.run_at(PAST).priority(3)
        }),
        ("future_run_at_stores_scheduled", |r| {
            r.run_at(FUTURE).priority(1)
        }),
    ]
}

/// The `sql::rejection::*` cases.
pub(super) fn cases() -> Vec<Case> {
    let mut out: Vec<Case> = rejected_cases()
        .into_iter()
        .map(|(name, build, want, detail, cap)| {
            let c = Case::new("rejection", name, move |db| {
                run(&db, name, build, want, detail)
            });
            match cap {
                Some(cap) => c.requires(cap),
                None => c,
            }
        })
        .collect();
    out.extend(accepted_cases().into_iter().map(|(name, build)| {
        Case::new("rejection", name, move |db| run_accepted(&db, name, build))
    }));
    out.push(Case::new(
        "rejection",
        "null_arguments_mean_defaults",
        |db| null_arguments(&db),
    ));
    out
}
