//! The engine's bulk path (docs/contract.md §14): one batch through the producer's `bulk`
//! request, each published row read back and judged like a single enqueue, a refused batch
//! judged like a refused single enqueue, and nothing stored for either.
//!
//! A submodule of the engine so that it shares the session's private state (the producer,
//! the runner's connection, the answered job ids the clean-up removes) without widening it.

use serde_json::{json, Value as Json};

use super::super::cases::{BulkCase, Case};
use crate::protocol::{BulkAnswer, BulkRefusal, BulkRequest};
use super::*;

impl Session {
    /// Ask the producer for one batch; a fault is a harness error, as in [`Self::ask`].
    fn ask_bulk(
        &self,
        inner: &mut Inner,
        case: &Case,
        jobs: Vec<Job>,
    ) -> Result<BulkAnswer, CaseFailure> {
        let protocol = self.hello().protocol;
        self.gave_up()?;
        // A bulk case runs alone (the gate): the producer's lock is held for the batch.
        let (answer, generation) = {
            let mut slot = lock(&self.producer);
            slot.seq += 1;
            let request = BulkRequest {
                seq: slot.seq,
                case: case.name.clone(),
                schema: self.db.schema.as_str().to_owned(),
                jobs: jobs.iter().map(|j| j.for_protocol(protocol)).collect(),
            };
            (slot.producer.bulk(&request, self.timeout), slot.generation)
        };
        self.count_answer(answer.as_ref().err());
        if let Ok(BulkAnswer::Published(ids)) = &answer {
            inner.answered.extend_from_slice(ids);
        }
        answer.map_err(|fault| self.fault(generation, fault))
    }

    /// A bulk case: one batch through the producer's `bulk` request (docs/contract.md §14).
    pub(super) fn run_bulk(
        &self,
        inner: &mut Inner,
        case: &Case,
        bulk: &BulkCase,
        scope: &str,
    ) -> Result<Verdict, CaseFailure> {
        let q = format!("{scope}q");
        match bulk {
            BulkCase::Routes { width, rows } => {
                self.run_plan(
                    inner,
                    case,
                    &Plan {
                        widths: vec![(q.clone(), i16::from(*width))],
                        steps: Vec::new(),
                        lock: None,
                    },
                )?;
                let mut batch = Vec::with_capacity(rows.len());
                for (k, (id, r)) in rows.iter().enumerate() {
                    let step = route_step(&q, r)?;
                    let Outcome::Stored(want) = &step.outcome else {
                        return Err(CaseFailure::harness("a routing row that expects no job"));
                    };
                    let reference =
                        match timed(inner, Phase::Reference, |i| self.reference(i, &step.call))? {
                            Ok(o) => o,
                            Err(r) => {
                                return Err(CaseFailure::mismatch(
                                    format!(
                                    "row {} (vector {id}): layer: database semantics: insert_job \
                                     itself refuses a valid request (in a rolled-back transaction)",
                                    k + 1
                                ),
                                    json!({"outcome": "accepted"}),
                                    json!({"insert_job": r.to_json()}),
                                ))
                            }
                        };
                    timed(inner, Phase::Judge, |_| {
                        judge::judge_reference(case, want, &reference, self.target.records())
                    })
                    .map_err(|f| at_row(f, k, id))?;
                    batch.push((step.job.clone(), want.clone(), reference));
                }
                let jobs: Vec<Job> = batch.iter().map(|(j, _, _)| j.clone()).collect();
                match timed(inner, Phase::Producer, |i| self.ask_bulk(i, case, jobs))? {
                    BulkAnswer::Published(ids) if ids.len() == batch.len() => {
                        for (k, (id, (job_id, (_, want, reference)))) in rows
                            .iter()
                            .map(|(id, _)| id)
                            .zip(ids.iter().zip(&batch))
                            .enumerate()
                        {
                            let stored = timed(inner, Phase::ReadBack, |i| self.read(i, *job_id))?;
                            timed(inner, Phase::Judge, |_| {
                                judge::judge_stored(
                                    case,
                                    want,
                                    &stored,
                                    Some(reference),
                                    None,
                                    self.target.records(),
                                )
                            })
                            .map_err(|f| at_row(f, k, id))?;
                        }
                        Ok(Verdict::Passed)
                    }
                    BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
                        format!(
                            "the producer answered {} job ids for a batch of {} jobs",
                            ids.len(),
                            batch.len()
                        ),
                        json!({"job_ids": batch.len()}),
                        json!({"job_ids": ids}),
                    )),
                    other => bulk_unexpected(other, json!({"outcome": "published"})),
                }
            }
            BulkCase::UniqueConflict => {
                let (dup, _, _) = unique_probe(&q, UNIQUE_KEY_STATES, false)?;
                let jobs = vec![base_job(&q), dup.clone(), dup];
                let want = json!({"refused": {"sqlstate": "ZA006", "code": "bulk_unique_conflict", "row": 3}});
                match timed(inner, Phase::Producer, |i| self.ask_bulk(i, case, jobs))? {
                    BulkAnswer::Refused(r)
                        if r.sqlstate.as_deref() == Some("ZA006")
                            && r.code.as_deref() == Some("bulk_unique_conflict")
                            && r.row == Some(3) =>
                    {
                        let client = self.client(inner)?;
                        let left = self
                            .db
                            .pg
                            .block_on(self.db.count_scope_rows_on(client, scope))
                            .map_err(|e| CaseFailure::harness(e.to_string()))?
                            .map_err(|e| {
                                CaseFailure::harness(format!("counting the case's rows: {e}"))
                            })?;
                        if left == 0 {
                            Ok(Verdict::Passed)
                        } else {
                            Err(CaseFailure::mismatch(
                                format!(
                                    "the batch was refused, but {left} row(s) of it were \
                                     committed: stage and publish in one transaction and roll \
                                     it back on a refusal"
                                ),
                                json!({"rows_left": 0}),
                                json!({"rows_left": left}),
                            ))
                        }
                    }
                    BulkAnswer::Refused(r) => Err(CaseFailure::mismatch(
                        format!(
                            "wrong refusal: {}; required ZA006 bulk_unique_conflict at row 3 \
                             (rows 2 and 3 take the same unique claim)",
                            describe_bulk_refusal(&r)
                        ),
                        want,
                        json!({"refused": r}),
                    )),
                    BulkAnswer::Published(ids) => Err(CaseFailure::mismatch(
                        "layer: SQL call encoding: a batch whose rows 2 and 3 take the same \
                         unique claim was published (the producer sent other unique keys or \
                         states, or did not publish through publish_batch)",
                        want,
                        json!({"job_ids": ids}),
                    )),
                    other => bulk_unexpected(other, want),
                }
            }
        }
    }
}

/// `f` as the finding of row `k` (0-based) of a batch, from vector `id`.
fn at_row(mut f: CaseFailure, k: usize, id: &str) -> CaseFailure {
    f.message = format!("row {} (vector {id}): {}", k + 1, f.message);
    f
}

/// The verdict of a bulk answer that is a skip, an error or a refusal of a valid batch.
fn bulk_unexpected(answer: BulkAnswer, expected: Json) -> Result<Verdict, CaseFailure> {
    match answer {
        BulkAnswer::Skipped(reason) => Ok(Verdict::NotApplicable(format!(
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
