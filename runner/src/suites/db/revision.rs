//! `sql::v1_1::*`: the rules contract revision 1.1 added or decided (docs/contract.md §13).
//!
//! * `unique_states_*`: a `p_unique_states` of any length but 8 is refused with 22026 and the
//!   contract DETAIL `unique_states_not_8_bits`, bound as the runner binds it (`$n::varbit`),
//!   before any other check.
//! * `rotor_expected_shard_refused`: `expected_enqueue_shard` on an unkeyed job is ZA001 at
//!   every width, never at random.
//! * `queue_enqueue_shards_*`: producers read a queue's width through the hardened read
//!   function (missing row = 1).
//! * `initial_state_run_at_given_is_scheduled`: a given `run_at`, even a past one, is
//!   `scheduled`, as released producers choose it, and the claim follows that state.
//! * `kind_null_not_null_violation`: a NULL kind is 23502 (the error table's row).
//! * `order_*`: which error wins when several checks fail (the documented check order).
//! * `detail_members`: every contract error's DETAIL carries the members the error table
//!   names (more members are allowed).
//! * `job_routing_scoped_to_session_user`: a producer reads only the jobs its session user
//!   enqueued (needs a superuser DSN to switch session users inside the rolled-back case).

use crate::pg::SqlText;
use std::sync::Arc;

use crate::contract::features::Feature;

use awa_conformance_core::concurrency_digest;
use serde_json::{json, Value as Json};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row};

use super::case::{query_fail, rolled_back, setup_fail, Case};
use super::catalog::hardening_cases;
use super::request::{
    insert, prepare, read, req, set_widths, unique_bytes, unique_name, width_queue, InsertJob,
};
use super::DbSetup;
use crate::contract::judge::rejection;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::quote_ident;

const SUITE: &str = "v1_1";
const PAST: &str = "2000-01-01T00:00:00Z";
const FUTURE: &str = "2999-01-01T00:00:00Z";

/// Run one statement inside a savepoint, so an expected error leaves the case's transaction
/// usable.
async fn attempt(
    client: &Client,
    db: &DbSetup,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Result<Vec<Row>, tokio_postgres::Error>, CaseFailure> {
    client
        .batch_execute("SAVEPOINT v")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = client.query(sql, params).await;
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT v"
    } else {
        "ROLLBACK TO SAVEPOINT v"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}

/// Insert `req` in a savepoint; the raw result.
async fn try_insert(
    client: &Client,
    db: &DbSetup,
    req: &InsertJob,
) -> Result<Result<super::request::Inserted, tokio_postgres::Error>, CaseFailure> {
    let (st, _) = prepare(client, db).await?;
    client
        .batch_execute("SAVEPOINT v")
        .await
        .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
    let res = insert(client, &st, req).await;
    let undo = if res.is_ok() {
        "RELEASE SAVEPOINT v"
    } else {
        "ROLLBACK TO SAVEPOINT v"
    };
    client
        .batch_execute(undo)
        .await
        .map_err(|e| query_fail(db, undo, &e))?;
    Ok(res)
}

/// A unique_states of the wrong length must be refused with 22026 and the contract DETAIL.
fn unique_states_refused(
    db: &Arc<DbSetup>,
    states: &'static str,
    kind: String,
) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let key = unique_bytes(db, "states");
        let mut req = req(&unique_name(db)).unique(Some(&key), Some(states));
        req.kind = kind;
        let what = format!("insert_job with unique_states '{states}' bound as $10::varbit");
        let rej = rejection(db, &what, try_insert(client, db, &req).await?)?;
        rej.expect(&what, "22026", Some("unique_states_not_8_bits"), None)?;
        if rej.message.starts_with("awa.insert_job: ")
            && rej.hint.as_deref().is_some_and(|h| !h.trim().is_empty())
        {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!("{what}: a contract error needs the awa.insert_job: prefix and a HINT"),
            json!({"message": "awa.insert_job: …", "hint": "(non-empty)"}),
            json!({"message": rej.message, "hint": rej.hint}),
        ))
    })
}

fn rotor_expected_shard_refused(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        let widths = [1u8, 2, 8, 64];
        set_widths(client, db, &base, &widths).await?;
        for w in widths {
            // 0 is the shard every backend's rotor gives at width 1, where a comparison with
            // the rotor's pick would pass; w - 1 is the other end.
            for expected in [0, w - 1] {
                let req =
                    req(&width_queue(&base, w)).opts(&json!({"expected_enqueue_shard": expected}));
                let what =
                    format!("unkeyed job at width {w} with expected_enqueue_shard {expected}");
                rejection(db, &what, try_insert(client, db, &req).await?)?.expect(
                    &what,
                    "ZA001",
                    Some("expected_enqueue_shard_mismatch"),
                    None,
                )?;
            }
        }
        Ok(Verdict::Passed)
    })
}

fn queue_enqueue_shards_widths(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        let widths = [1u8, 2, 5, 63, 64];
        set_widths(client, db, &base, &widths).await?;
        let sql = include_str!("../../../sql/queue_enqueue_shards_call.sql")
            .in_schema(db.schema.quoted());
        let mut want = Vec::new();
        let mut got = Vec::new();
        let mut queues: Vec<(String, i16)> = widths
            .iter()
            .map(|w| (width_queue(&base, *w), i16::from(*w)))
            .collect();
        queues.push((format!("{base}_missing"), 1));
        for (q, w) in &queues {
            let row = client
                .query_one(&sql, &[q])
                .await
                .map_err(|e| query_fail(db, &format!("queue_enqueue_shards({q})"), &e))?;
            want.push(json!({"queue": q, "width": w}));
            got.push(json!({"queue": q, "width": row.try_get::<_, Option<i16>>(0).ok().flatten()}));
        }
        if want == got {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "queue_enqueue_shards must return queue_meta.enqueue_shards, and 1 for a queue \
             without a row (the width insert_job routes with)",
            json!(want),
            json!(got),
        ))
    })
}

fn producer_can_read_widths(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let function = format!("{}.queue_enqueue_shards(text)", db.schema.quoted());
        let row = client
            .query_opt(
                include_str!("../../../sql/producer_can_execute.sql"),
                &[&db.producer_role, &function],
            )
            .await
            .map_err(|e| query_fail(db, "has_function_privilege", &e))?;
        match row.map(|r| r.get::<_, bool>(0)) {
            Some(true) => Ok(Verdict::Passed),
            Some(false) => Err(CaseFailure::new(format!(
                "producer role {} cannot EXECUTE {function}: producers need it to learn a \
                 queue's width (GRANT EXECUTE on the exact regprocedure)",
                quote_ident(&db.producer_role)
            ))),
            None => Ok(Verdict::NotApplicable(format!(
                "producer role {} does not exist (see sql::catalog::producer_role_grants)",
                quote_ident(&db.producer_role)
            ))),
        }
    })
}

fn initial_state(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let q = unique_name(db);
        let mut states = Vec::new();
        for run_at in [None, Some(PAST), Some(FUTURE)] {
            let mut req = req(&q);
            req.run_at = run_at.map(str::to_owned);
            let job = try_insert(client, db, &req)
                .await?
                .map_err(|e| query_fail(db, "insert_job (must be accepted)", &e))?;
            states.push(json!({"run_at": run_at, "state": job.returned.state}));
        }
        let want = json!([
            {"run_at": null, "state": "available"},
            {"run_at": PAST, "state": "scheduled"},
            {"run_at": FUTURE, "state": "scheduled"},
        ]);
        if json!(states) != want {
            return Err(CaseFailure::mismatch(
                "the initial state is scheduled whenever run_at is given (even in the past), \
                 available otherwise, as released producers choose it",
                want,
                json!(states),
            ));
        }
        // The claim follows that state: under 01111000 (no scheduled bit) a past run_at takes
        // no claim, so the available insert after it claims, and a third one collides.
        let key = unique_bytes(db, "initial");
        let mut past = req(&q).unique(Some(&key), Some("01111000"));
        past.run_at = Some(PAST.to_owned());
        let now = req(&q).unique(Some(&key), Some("01111000"));
        let first = try_insert(client, db, &past).await?;
        let second = try_insert(client, db, &now).await?;
        let third = try_insert(client, db, &now).await?;
        let sqlstate = |r: &Result<_, tokio_postgres::Error>| match r {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.code().map(|c| c.code().to_owned())),
        };
        let got = json!([sqlstate(&first), sqlstate(&second), sqlstate(&third)]);
        let want = json!(["accepted", "accepted", "23505"]);
        if got == want {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "mask 01111000: a past run_at (scheduled) takes no claim; the next available insert \
             claims; a third collides",
            want,
            got,
        ))
    })
}

fn kind_null(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let sql =
            include_str!("../../../sql/insert_job_kind_null.sql").in_schema(db.schema.quoted());
        let q = unique_name(db);
        let what = "insert_job with p_kind NULL";
        let res = attempt(client, db, &sql, &[&q]).await?;
        rejection(db, what, res)?.expect(what, "23502", None, None)?;
        Ok(Verdict::Passed)
    })
}

fn job_routing_scoped(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let superuser: Option<bool> = client
            .query_opt(include_str!("../../../sql/is_superuser.sql"), &[])
            .await
            .map_err(|e| query_fail(db, "pg_roles", &e))?
            .map(|r| r.get(0));
        if superuser != Some(true) {
            return Ok(Verdict::NotApplicable(
                "switching session users needs a superuser DSN; schema/tests/two_producers.py \
                 checks the reference schema with two real logins"
                    .to_owned(),
            ));
        }
        let base = unique_name(db);
        let roles = [format!("{base}_scope_a"), format!("{base}_scope_b")];
        client
            .batch_execute(&include_str!("../../../sql/scope_roles.sql").fill(&[
                ("A", &quote_ident(&roles[0])),
                ("B", &quote_ident(&roles[1])),
                ("P", &quote_ident(&db.producer_role)),
            ]))
            .await
            .map_err(|e| setup_fail(db, "creating two producer roles", &e))?;
        let insert_sql =
            include_str!("../../../sql/scope_insert.sql").in_schema(db.schema.quoted());
        let (_, rd) = prepare(client, db).await?;
        let switch = |role: &str| format!("SET LOCAL SESSION AUTHORIZATION {}", quote_ident(role));
        let mut jobs = Vec::new();
        for (i, role) in roles.iter().enumerate() {
            client
                .batch_execute(&switch(role))
                .await
                .map_err(|e| setup_fail(db, "SET SESSION AUTHORIZATION", &e))?;
            let key = format!("scope-{i}").into_bytes();
            let row = client
                .query_one(&insert_sql, &[&base, &key, &key])
                .await
                .map_err(|e| query_fail(db, &format!("insert_job as {role}"), &e))?;
            jobs.push((row.get::<_, i64>(0), key));
        }
        let mut problems = Vec::new();
        for (i, role) in roles.iter().enumerate() {
            client
                .batch_execute(&switch(role))
                .await
                .map_err(|e| setup_fail(db, "SET SESSION AUTHORIZATION", &e))?;
            for (j, (job, key)) in jobs.iter().enumerate() {
                let s = read(client, &rd, *job)
                    .await
                    .map_err(|e| query_fail(db, &format!("job_routing({job}) as {role}"), &e))?;
                let own = i == j;
                let visible = s.job_id == Some(*job)
                    && s.ordering_key_digest.as_deref() == Some(&concurrency_digest(key)[..]);
                let hidden = s.job_id.is_none()
                    && s.queue.is_none()
                    && s.enqueue_shard.is_none()
                    && s.route_source.is_none()
                    && s.concurrency_digest.is_none()
                    && s.ordering_key_digest.is_none();
                if (own && !visible) || (!own && !hidden) {
                    problems.push(json!({"reader": role, "job_of": roles.get(j), "job": job,
                                         "own": own, "got_job_id": s.job_id,
                                         "got_route_source": s.route_source}));
                }
            }
        }
        client
            .batch_execute("RESET SESSION AUTHORIZATION")
            .await
            .map_err(|e| setup_fail(db, "RESET SESSION AUTHORIZATION", &e))?;
        for (job, _) in &jobs {
            let s = read(client, &rd, *job)
                .await
                .map_err(|e| query_fail(db, &format!("job_routing({job}) as the runner"), &e))?;
            if s.job_id != Some(*job) {
                problems.push(
                    json!({"reader": "the runner (superuser)", "job": job, "got_job_id": s.job_id}),
                );
            }
        }
        if problems.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "job_routing must show a producer only the jobs its session user enqueued (another \
             producer's job reads as the NULL row of an unknown id), and every job to the \
             installer",
            json!([]),
            json!(problems),
        ))
    })
}

/// The DETAIL of a rejected call, parsed, or a failure saying why there is none.
fn detail_of<T: std::fmt::Debug>(
    db: &DbSetup,
    what: &str,
    res: Result<T, tokio_postgres::Error>,
) -> Result<(String, Json), CaseFailure> {
    match res {
        Ok(v) => Err(CaseFailure::new(format!(
            "{what}: the call succeeded ({v:?}) but must be rejected"
        ))),
        Err(e) => match e.as_db_error() {
            Some(d) => Ok((
                d.code().code().to_owned(),
                d.detail()
                    .and_then(|t| serde_json::from_str::<Json>(t).ok())
                    .unwrap_or(Json::Null),
            )),
            None => Err(query_fail(db, what, &e)),
        },
    }
}

/// Builds a case's request from the default request on its queue.
type Build = fn(InsertJob) -> InsertJob;

/// Requests that fail two or more checks, and the error that must win
/// (case name, request, SQLSTATE, DETAIL code).
fn order_cases() -> Vec<(&'static str, Build, &'static str, &'static str)> {
    vec![
        (
            "order_unknown_key_before_invalid_value",
            |r| r.opts(&json!({"zz": 1, "expected_enqueue_shard": "3"})),
            "ZA002",
            "unknown_opts_key",
        ),
        (
            "order_invalid_value_before_key_length",
            |r| {
                r.keys(Some(&[b'k'; 4097]), None)
                    .opts(&json!({"expected_enqueue_shard": "3"}))
            },
            "ZA005",
            "invalid_opts_value",
        ),
        (
            "order_key_length_before_expectations",
            |r| {
                r.keys(Some(&[b'k'; 4097]), None)
                    .opts(&json!({"expected_route_source": "rotor"}))
            },
            "ZA003",
            "key_too_long",
        ),
        (
            "order_digest_mismatch_reported_first",
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(&json!({
                    "expected_route_source": "rotor",
                    "expected_enqueue_shard": 64,
                    "expected_concurrency_digest": "00".repeat(32),
                }))
            },
            "ZA001",
            "expected_concurrency_digest_mismatch",
        ),
        (
            "order_shard_mismatch_before_route_source",
            |r| {
                r.keys(None, Some(b"tenant-1")).opts(&json!({
                    "expected_route_source": "rotor",
                    "expected_enqueue_shard": 64,
                }))
            },
            "ZA001",
            "expected_enqueue_shard_mismatch",
        ),
    ]
}

fn order_case(
    db: &Arc<DbSetup>,
    name: &str,
    build: Build,
    sqlstate: &str,
    code: &str,
) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let req = build(req(&width_queue(&base, 8)));
        rejection(db, name, try_insert(client, db, &req).await?)?.expect(
            name,
            sqlstate,
            Some(code),
            None,
        )?;
        Ok(Verdict::Passed)
    })
}

/// (what, request, members the DETAIL must have besides `code`).
fn detail_requests() -> Vec<(&'static str, Build, &'static [&'static str])> {
    vec![
        (
            "ZA001 expected_concurrency_digest_mismatch",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_concurrency_digest": null}))
            },
            &["expected", "actual"],
        ),
        (
            "ZA001 expected_enqueue_shard_mismatch",
            |r| {
                r.keys(None, Some(b"t"))
                    .opts(&json!({"expected_enqueue_shard": 64}))
            },
            &["expected", "actual"],
        ),
        (
            "ZA001 expected_enqueue_shard_mismatch (rotor)",
            |r| r.opts(&json!({"expected_enqueue_shard": 0})),
            &["expected", "actual", "route_source"],
        ),
        (
            "ZA001 expected_route_source_mismatch",
            |r| r.opts(&json!({"expected_route_source": "ordering_key"})),
            &["expected", "actual"],
        ),
        (
            "ZA002 opts_not_object",
            |r| r.opts(&json!([])),
            &["actual_type"],
        ),
        (
            "ZA002 unknown_opts_key",
            |r| r.opts(&json!({"zz": 1})),
            &["key", "allowed"],
        ),
        (
            "ZA003 key_too_long",
            |r| r.keys(None, Some(&[0u8; 4097])),
            &["field", "length", "max"],
        ),
        (
            "ZA005 invalid_opts_value",
            |r| r.opts(&json!({"expected_enqueue_shard": 1.5})),
            &["key", "expected_type"],
        ),
        (
            "22026 unique_states_not_8_bits",
            |r| r.unique(Some(b"k"), Some("1111")),
            &["length", "expected_length"],
        ),
    ]
}

fn detail_members(db: &Arc<DbSetup>) -> Result<Verdict, CaseFailure> {
    rolled_back(db, async |client| {
        let base = unique_name(db);
        set_widths(client, db, &base, &[8]).await?;
        let mut problems = Vec::new();
        for (what, build, members) in detail_requests() {
            let req = build(req(&width_queue(&base, 8)));
            let (_, detail) = detail_of(db, what, try_insert(client, db, &req).await?)?;
            let missing: Vec<&str> = std::iter::once("code")
                .chain(members.iter().copied())
                .filter(|m| detail.get(*m).is_none())
                .collect();
            if !missing.is_empty() {
                problems.push(json!({"error": what, "missing": missing, "detail": detail}));
            }
        }
        // ZA004 is unreachable through insert_job (queue_meta's CHECK); move_shard raises it.
        let sql =
            include_str!("../../../sql/lifecycle_move_shard.sql").in_schema(db.schema.quoted());
        let res = attempt(client, db, &sql, &[&0i32, &0i32]).await?;
        let (_, detail) = detail_of(db, "ZA004 invalid_width", res)?;
        let missing: Vec<&str> = ["code", "width", "min", "max"]
            .into_iter()
            .filter(|m| detail.get(*m).is_none())
            .collect();
        if !missing.is_empty() {
            problems.push(
                json!({"error": "ZA004 invalid_width", "missing": missing, "detail": detail}),
            );
        }
        if problems.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            "each contract error's DETAIL must carry the members of the error table              (docs/contract.md §10)",
            json!([]),
            json!(problems),
        ))
    })
}

/// The `sql::v1_1::*` cases.
pub(super) fn cases() -> Vec<Case> {
    let long_kind = "k".repeat(201);
    let mut out = vec![
        Case::new(SUITE, "unique_states_4_bits_refused", |db| {
            unique_states_refused(&db, "1111", "awa_conformance".to_owned())
        }),
        Case::new(SUITE, "unique_states_9_bits_refused", |db| {
            unique_states_refused(&db, "111110000", "awa_conformance".to_owned())
        }),
        Case::new(SUITE, "unique_states_empty_refused", |db| {
            unique_states_refused(&db, "", "awa_conformance".to_owned())
        }),
        Case::new(SUITE, "unique_states_checked_first", move |db| {
            unique_states_refused(&db, "1111", long_kind)
        }),
        Case::new(SUITE, "rotor_expected_shard_refused", |db| {
            rotor_expected_shard_refused(&db)
        })
        .requires("expectations"),
        Case::new(SUITE, "queue_enqueue_shards_widths", |db| {
            queue_enqueue_shards_widths(&db)
        })
        .checks(&[Feature::OrderingKey, Feature::ConcurrencyKey]),
        Case::new(SUITE, "queue_enqueue_shards_producer_execute", |db| {
            producer_can_read_widths(&db)
        })
        .checks(&[Feature::Catalog]),
        Case::new(SUITE, "initial_state_run_at_given_is_scheduled", |db| {
            initial_state(&db)
        })
        .checks(&[Feature::Payload]),
        Case::new(SUITE, "kind_null_not_null_violation", |db| kind_null(&db)),
        Case::new(SUITE, "detail_members", |db| detail_members(&db))
            .requires("expectations")
            .requires("move_shard"),
        Case::new(SUITE, "job_routing_scoped_to_session_user", |db| {
            job_routing_scoped(&db)
        })
        .checks(&[Feature::Catalog])
        .requires("job_routing"),
    ];
    out.extend(order_cases().into_iter().map(|(name, build, state, code)| {
        Case::new(SUITE, name, move |db| {
            order_case(&db, name, build, state, code)
        })
        .requires("expectations")
    }));
    // Named sql::catalog::queue_enqueue_shards_* like the other functions' hardening cases.
    out.extend(hardening_cases("queue_enqueue_shards"));
    out
}
