//! The engine's bulk path (docs/contract.md §14): one batch through the producer's `bulk`
//! request, each published row read back and judged like a single enqueue, a refused batch
//! judged like a refused single enqueue, and nothing stored for either.
//!
//! A submodule of the engine so that it shares the session's private state (the producer,
//! the runner's connection, the answered job ids the clean-up removes) without widening it.

use super::super::cases::{BulkCase, Case};
use super::*;
use crate::contract::judge::answer::at_row;
use crate::protocol::{BulkAnswer, BulkRequest};

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
                    let result = timed(inner, Phase::Reference, |i| self.reference(i, &step.call))?;
                    let reference = match timed(inner, Phase::Judge, |_| {
                        answer::reference(case, &step.outcome, &result, self.target.records())
                    }) {
                        Ok(Some(o)) => o,
                        Ok(None) => {
                            return Err(CaseFailure::harness("a routing row that expects no job"))
                        }
                        // Routing rows carry no unique key: a refusal is the database's own.
                        Err(ReferenceProblem::Blocked(_)) => {
                            let f = match &result {
                                Err(r) => answer::refuses_valid(r),
                                Ok(_) => CaseFailure::harness("a blocked row that was stored"),
                            };
                            return Err(at_row(f, k, id));
                        }
                        Err(ReferenceProblem::Failed(f)) => return Err(at_row(f, k, id)),
                    };
                    batch.push((step.job.clone(), want.clone(), reference));
                }
                let jobs: Vec<Job> = batch.iter().map(|(j, _, _)| j.clone()).collect();
                let reply = timed(inner, Phase::Producer, |i| self.ask_bulk(i, case, jobs))?;
                let ids = match answer::bulk_published(reply, batch.len())? {
                    Ok(ids) => ids,
                    Err(verdict) => return Ok(verdict),
                };
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
            BulkCase::UniqueConflict => {
                let (dup, _) = unique_probe(&q, UNIQUE_KEY_STATES, false)?;
                let jobs = vec![base_job(&q), dup.clone(), dup];
                let reply = timed(inner, Phase::Producer, |i| self.ask_bulk(i, case, jobs))?;
                if let Err(verdict) = answer::bulk_conflict(reply)? {
                    return Ok(verdict);
                }
                let client = self.client(inner)?;
                let left = self
                    .db
                    .pg
                    .block_on(self.db.count_scope_rows_on(client, scope))
                    .map_err(|e| CaseFailure::harness(e.to_string()))?
                    .map_err(|e| CaseFailure::harness(format!("counting the case's rows: {e}")))?;
                answer::bulk_left(left)
            }
        }
    }
}
