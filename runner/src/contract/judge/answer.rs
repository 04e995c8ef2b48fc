//! The answer judge: one request of a check, from what it must end in ([`Outcome`]), what
//! `insert_job` itself answers for it (the reference, rolled back), what the producer
//! answered ([`EnqueueAnswer`], [`BulkAnswer`]) and what the engine read back for the
//! answered job, to a verdict. Every producer request, single or in a batch, is judged here:
//! the engine only asks, reads and schedules.
//!
//! The matrix, in the order it is decided:
//! * the reference first: a request that must be stored and that `insert_job` refuses, or one
//!   that must be refused and that it stores or refuses otherwise, is the database's finding
//!   ([`Layer::DatabaseSemantics`]), whatever the producer does; a refusal by the unique claim
//!   of a job outside the case is no finding at all ([`ReferenceProblem::Blocked`]);
//! * then the answer: a skip is not applicable, an error is a finding; a stored job is judged
//!   field by field ([`super::judge_stored`], [`super::judge_payload`]); a refusal must be the
//!   rule's ([`Refusal::admits`]); an id answered where a refusal was due is the rule's own
//!   sentence ([`Refusal::accepted`]).

use serde_json::{json, Value as Json};

use super::{judge_payload, judge_reference, judge_stored, Layer, Records, Refusal, Subject};
use super::{Observed, Rejection, Stored};
use crate::contract::expect::{Outcome, Payload};
use crate::outcome::{CaseFailure, Verdict};
use crate::protocol::{BulkAnswer, BulkRefusal, EnqueueAnswer, Refused};

/// Why the reference call ends the request before the producer is asked.
#[derive(Debug)]
pub enum ReferenceProblem {
    /// `insert_job` refused a request that must be stored with a duplicate claim: a job
    /// outside the case holds its unique key. No finding: the engine names the job (with the
    /// rejection's message) and the case errors.
    Blocked(String),
    /// The database's finding.
    Failed(CaseFailure),
}

/// Judge the reference call of a request against what it must end in. Returns what
/// `insert_job` stored (rolled back) for a request that must be stored, `None` for one that
/// must be refused.
///
/// # Errors
/// [`ReferenceProblem`].
pub fn reference(
    case: &dyn Subject,
    outcome: &Outcome,
    reference: &Result<Observed, Rejection>,
    records: Records,
) -> Result<Option<Observed>, ReferenceProblem> {
    match (outcome, reference) {
        (Outcome::Stored(want), Ok(r)) => {
            judge_reference(case, want, r, records).map_err(ReferenceProblem::Failed)?;
            Ok(Some(r.clone()))
        }
        (Outcome::Stored(_), Err(r)) if Refusal::Duplicate.admits_rejection(r) => {
            Err(ReferenceProblem::Blocked(r.message.clone()))
        }
        (Outcome::Stored(_), Err(r)) => Err(ReferenceProblem::Failed(refuses_valid(r))),
        (Outcome::Refused(rule), Err(r)) if rule.admits_rejection(r) => Ok(None),
        (Outcome::Refused(rule), r) => Err(ReferenceProblem::Failed(CaseFailure::at(
            Layer::DatabaseSemantics,
            format!(
                "insert_job itself does not refuse as required ({})",
                rule.wanted()
            ),
            json!({"refused": rule.wanted()}),
            json!({"insert_job": match r {
                Ok(o) => o.to_json(),
                Err(r) => r.to_json(),
            }}),
        ))),
    }
}

/// The database's finding when `insert_job` itself refuses a request that must be stored.
#[must_use]
pub fn refuses_valid(r: &Rejection) -> CaseFailure {
    CaseFailure::at(
        Layer::DatabaseSemantics,
        "insert_job itself refuses a valid request (in a rolled-back transaction)",
        json!({"outcome": "accepted"}),
        json!({"insert_job": r.to_json()}),
    )
}

/// What the engine read back for the job id a producer answered.
#[derive(Debug)]
pub enum ReadBack {
    /// Nothing: the answer named no job.
    Nothing,
    /// A request that must be stored: the job's routing, and (revision 1.2) the payload the
    /// request asks with the whole stored job.
    Stored {
        /// The job through `job_routing` (no `job_id` when there is no such job).
        routing: Observed,
        /// The payload asked and the whole job (boxed: the largest variant by far).
        payload: Option<Box<(Payload, Stored)>>,
    },
    /// A request that must be refused, answered with an id: the job's routing, and whether
    /// the id was answered before in the same case.
    Accepted {
        /// The job through `job_routing`.
        routing: Observed,
        /// The id was an earlier request's.
        repeated: bool,
    },
}

/// Judge the producer's answer to one request. `request` is the request as sent (shown with
/// a mismatch), `states` its `unique_states`, `reference` what [`reference`] returned.
/// `Some(verdict)` ends the case early (the producer skipped it).
///
/// # Errors
/// The finding, its layer named where one applies.
#[expect(
    clippy::too_many_arguments,
    reason = "each is one of the judge's inputs (ADR 0061); a struct of them would only rename \
              them at its call site"
)]
pub fn answer(
    case: &dyn Subject,
    outcome: &Outcome,
    request: &Json,
    states: Option<&str>,
    reference: Option<&Observed>,
    answer: EnqueueAnswer,
    read: ReadBack,
    records: Records,
) -> Result<Option<Verdict>, CaseFailure> {
    match (outcome, answer) {
        (_, EnqueueAnswer::Skipped(reason)) => Ok(Some(Verdict::Skipped(format!(
            "skipped by the producer: {reason}"
        )))),
        (_, EnqueueAnswer::Error(msg)) => Err(CaseFailure::mismatch(
            format!("the producer reported an error for this request: {msg}"),
            match outcome {
                Outcome::Stored(_) => json!({"outcome": "enqueued"}),
                Outcome::Refused(rule) => json!({"refused": rule.wanted()}),
            },
            json!({"error": msg, "request": request}),
        )),
        (Outcome::Stored(want), EnqueueAnswer::Enqueued { trace, .. }) => {
            let ReadBack::Stored { routing, payload } = read else {
                return Err(CaseFailure::harness(
                    "the engine read back no stored job for an enqueued answer",
                ));
            };
            judge_stored(case, want, &routing, reference, trace.as_ref(), records)?;
            if let Some(payload) = payload {
                let (want, whole) = *payload;
                judge_payload("the producer", &want, &whole).map_err(|mut f| {
                    f.actual = Some(json!({"stored": f.actual, "request": request}));
                    f
                })?;
            }
            Ok(None)
        }
        (Outcome::Stored(want), EnqueueAnswer::Refused(r)) => Err(CaseFailure::mismatch(
            format!(
                "the producer refused a valid request ({})",
                describe_refused(&r)
            ),
            json!({"outcome": "enqueued", "expected": want.to_json()}),
            json!({"refused": r, "request": request}),
        )),
        (Outcome::Refused(rule), EnqueueAnswer::Refused(r)) => {
            if rule.admits(r.sqlstate.as_deref(), r.code.as_deref()) {
                Ok(None)
            } else {
                Err(CaseFailure::mismatch(
                    format!(
                        "wrong refusal: {}; required {}",
                        describe_refused(&r),
                        rule.wanted()
                    ),
                    json!({"refused": rule.wanted()}),
                    json!({"refused": r}),
                ))
            }
        }
        (Outcome::Refused(rule), EnqueueAnswer::Enqueued { job_id, .. }) => {
            let ReadBack::Accepted { routing, repeated } = read else {
                return Err(CaseFailure::harness(
                    "the engine read back nothing for an id answered instead of a refusal",
                ));
            };
            let (layer, what) = if routing.job_id.is_none() {
                (
                    Layer::Payload,
                    format!(
                        "the producer answered job id {job_id}, which the database does not \
                         hold, instead of the refusal ({}): answer a refusal as refused, never \
                         with an id (a swallowed error, or a made-up id)",
                        rule.wanted()
                    ),
                )
            } else {
                rule.accepted(job_id, states, routing.unique_states.as_deref(), repeated)
            };
            Err(CaseFailure::at(
                layer,
                what,
                json!({"refused": rule.wanted()}),
                json!({"stored": routing.to_json(), "request": request}),
            ))
        }
    }
}

/// A producer's refusal as a message shows it.
#[must_use]
pub fn describe_refused(r: &Refused) -> String {
    format!(
        "sqlstate {}, code {}: {}",
        r.sqlstate.as_deref().unwrap_or("null"),
        r.code.as_deref().unwrap_or("null"),
        r.message
    )
}

/// `f` as the finding of row `k` (0-based) of a batch, from vector `id`.
#[must_use]
pub fn at_row(mut f: CaseFailure, k: usize, id: &str) -> CaseFailure {
    f.message = format!("row {} (vector {id}): {}", k + 1, f.message);
    f
}

/// The verdict of a valid batch's answer that published a different number of jobs, or
/// that is a skip, an error or a refusal: `Ok(ids)` when it published one id per row.
///
/// # Errors
/// The finding.
pub fn bulk_published(
    answer: BulkAnswer,
    rows: usize,
) -> Result<Result<Vec<i64>, Verdict>, CaseFailure> {
    let expected = json!({"outcome": "published"});
    match answer {
        BulkAnswer::Published(ids) if ids.len() == rows => Ok(Ok(ids)),
        BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
            format!(
                "the producer answered {} job ids for a batch of {rows} jobs",
                ids.len()
            ),
            json!({"job_ids": rows}),
            json!({"job_ids": ids}),
        )),
        other => bulk_unexpected(other, expected).map(Err),
    }
}

/// The rule of a batch whose rows 2 and 3 take the same unique claim (docs/contract.md
/// section 14): refused with ZA006 `bulk_unique_conflict` at row 3, and nothing of it
/// committed. `Ok(true)` when refused so: the engine then counts the rows it left and judges
/// them with [`bulk_left`].
///
/// # Errors
/// The finding, or the verdict of a skip.
pub fn bulk_conflict(answer: BulkAnswer) -> Result<Result<(), Verdict>, CaseFailure> {
    let want = json!({"refused": {"sqlstate": "ZA006", "code": "bulk_unique_conflict", "row": 3}});
    match answer {
        BulkAnswer::Refused(r)
            if r.sqlstate.as_deref() == Some("ZA006")
                && r.code.as_deref() == Some("bulk_unique_conflict")
                && r.row == Some(3) =>
        {
            Ok(Ok(()))
        }
        BulkAnswer::Refused(r) => Err(CaseFailure::mismatch(
            format!(
                "wrong refusal: {}; required ZA006 bulk_unique_conflict at row 3 (rows 2 and 3 \
                 take the same unique claim)",
                describe_bulk_refusal(&r)
            ),
            want,
            json!({"refused": r}),
        )),
        BulkAnswer::Published(ids) => Err(CaseFailure::at(
            Layer::SqlCallEncoding,
            "a batch whose rows 2 and 3 take the same unique claim was published (the producer \
             sent other unique keys or states, or did not publish through publish_batch)",
            want,
            json!({"job_ids": ids}),
        )),
        other => bulk_unexpected(other, want).map(Err),
    }
}

/// A refused batch must leave nothing: `left` rows of it still committed is a finding.
///
/// # Errors
/// The finding.
pub fn bulk_left(left: i64) -> Result<Verdict, CaseFailure> {
    if left == 0 {
        return Ok(Verdict::Passed);
    }
    Err(CaseFailure::mismatch(
        format!(
            "the batch was refused, but {left} row(s) of it were committed: stage and publish \
             in one transaction and roll it back on a refusal"
        ),
        json!({"rows_left": 0}),
        json!({"rows_left": left}),
    ))
}

/// The verdict of a bulk answer that is a skip, an error, a refusal of a valid batch, or a
/// publication of a batch that must be refused.
fn bulk_unexpected(answer: BulkAnswer, expected: Json) -> Result<Verdict, CaseFailure> {
    match answer {
        BulkAnswer::Skipped(reason) => Ok(Verdict::Skipped(format!(
            "skipped by the producer: {reason}"
        ))),
        BulkAnswer::Error(msg) => Err(CaseFailure::mismatch(
            format!("the producer reported an error for this batch: {msg}"),
            expected,
            json!({"error": msg}),
        )),
        BulkAnswer::Refused(r) => Err(CaseFailure::mismatch(
            format!(
                "the producer refused a valid batch ({})",
                describe_bulk_refusal(&r)
            ),
            expected,
            json!({"refused": r}),
        )),
        BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
            "the batch was published",
            expected,
            json!({"job_ids": ids}),
        )),
    }
}

fn describe_bulk_refusal(r: &BulkRefusal) -> String {
    format!(
        "sqlstate {}, code {}, row {}: {}",
        r.sqlstate.as_deref().unwrap_or("null"),
        r.code.as_deref().unwrap_or("null"),
        r.row.map_or_else(|| "null".to_owned(), |k| k.to_string()),
        r.message
    )
}
