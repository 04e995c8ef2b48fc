//! The exchange with the producer process: its slot (the producer behind its own lock, the
//! request sequence, restarts by generation), one request's round trip with its bound, a
//! fault turned into a harness error and a restart, and the count of timeouts in a row that
//! stops a producer that hangs (`--max-consecutive-timeouts`).
//!
//! A submodule of the engine so that it shares the session's private state without
//! widening it.

use super::*;

/// How much of the producer's stderr a case message carries (the JSON report too).
pub(super) const STDERR_IN_MESSAGE: usize = 4096;
/// At most this many bytes of a case's own producer output are kept in the report (its tail).
pub(super) const OUTPUT_KEPT: usize = 2048;
/// At most this many lines naming other cases wait for them.
pub(super) const UNCLAIMED_KEPT: usize = 2000;

/// The last [`OUTPUT_KEPT`] bytes of `text`, cut at a character boundary.
pub(super) fn tail(text: &str) -> String {
    last_bytes(text.trim_end(), OUTPUT_KEPT).to_owned()
}

/// At most the last `max` bytes of `text`, starting at a character boundary.
fn last_bytes(text: &str, max: usize) -> &str {
    let start = text.len().saturating_sub(max);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    text.get(start..).unwrap_or_default()
}

/// Whether `line` names the case `case` itself, not only a longer name it begins
/// (`…::cj-1` in `…::cj-1::unique`).
pub(super) fn names_case(line: &str, case: &str) -> bool {
    line.match_indices(case).any(|(at, _)| {
        line.get(at + case.len()..)
            .and_then(|rest| rest.chars().next())
            .is_none_or(|c| !(c == ':' || c == '-' || c == '_' || c.is_alphanumeric()))
    })
}

/// Called once, with the message, when the producer has timed out on the limit of requests
/// in a row ([`Session::limit_timeouts`]): the caller stops the run.
pub type OnUnresponsive = Arc<dyn Fn(String) + Send + Sync>;

/// `--max-consecutive-timeouts` and what to do when it is reached.
pub(super) struct TimeoutLimit {
    pub(super) limit: u32,
    pub(super) on_reached: OnUnresponsive,
    pub(super) reached: bool,
}

/// The producer, behind its own lock: held to send a request (or for a whole bulk
/// exchange), never while an enqueue answer is awaited.
pub(super) struct Slot {
    pub(super) producer: Box<dyn Producer>,
    pub(super) seq: u64,
    /// Bumped by each restart: a fault restarts the producer only when no other request's
    /// fault restarted it since this request was sent.
    pub(super) generation: u64,
    /// Requests in a row that ended in a timeout (reset by any answer).
    pub(super) timeouts_in_a_row: u32,
}

impl Session {
    /// After `limit` requests in a row that timed out, call `on_reached` once with a message
    /// naming the count (`--max-consecutive-timeouts`); every later case errors at once
    /// instead of waiting for the timeout again.
    pub fn limit_timeouts(&self, limit: u32, on_reached: OnUnresponsive) {
        *lock(&self.timeout_limit) = Some(TimeoutLimit {
            limit,
            on_reached,
            reached: false,
        });
    }

    /// The message of a run stopped by the timeout limit, once it was reached.
    #[must_use]
    pub fn unresponsive(&self) -> Option<String> {
        let limit = lock(&self.timeout_limit);
        limit
            .as_ref()
            .filter(|l| l.reached)
            .map(|l| unresponsive_message(l.limit, self.timeout))
    }

    /// Count a request's end towards the timeout limit: an answer resets it, a timeout adds
    /// one, any other fault leaves it as it is (with several in flight, the requests a
    /// timeout's restart cut off are no answers either).
    pub(super) fn count_answer(&self, fault: Option<&ProducerFault>) {
        match fault {
            None => self.count_timeout(false),
            Some(ProducerFault::Timeout(_)) => self.count_timeout(true),
            Some(_) => {}
        }
    }

    /// Count a request's end towards the timeout limit.
    pub(super) fn count_timeout(&self, timed_out: bool) {
        let in_a_row = {
            let mut producer = lock(&self.producer);
            if !timed_out {
                producer.timeouts_in_a_row = 0;
                return;
            }
            producer.timeouts_in_a_row += 1;
            producer.timeouts_in_a_row
        };
        let mut slot = lock(&self.timeout_limit);
        if let Some(l) = slot.as_mut() {
            if !l.reached && in_a_row >= l.limit {
                l.reached = true;
                (l.on_reached)(unresponsive_message(l.limit, self.timeout));
            }
        }
    }

    /// Ask the producer; a fault is a harness error, after which the producer is restarted.
    /// The producer's lock is held to send the request, not while its answer is awaited.
    pub(super) fn ask(
        &self,
        inner: &mut Inner,
        case: &Case,
        job: &Job,
    ) -> Result<EnqueueAnswer, CaseFailure> {
        let job = job.for_protocol(self.hello().protocol);
        self.gave_up()?;
        let (pending, generation) = {
            let mut slot = lock(&self.producer);
            slot.seq += 1;
            let request = EnqueueRequest {
                seq: slot.seq,
                case: case.name.clone(),
                schema: self.db.schema.as_str().to_owned(),
                job,
            };
            (slot.producer.send(&request, self.timeout), slot.generation)
        };
        let answer = pending.and_then(|wait| wait());
        self.count_answer(answer.as_ref().err());
        if let Ok(EnqueueAnswer::Enqueued { job_id, .. }) = &answer {
            inner.answered.push(*job_id);
        }
        answer.map_err(|fault| self.fault(generation, fault))
    }

    /// A harness error instead of a request once the timeout limit was reached.
    pub(super) fn gave_up(&self) -> Result<(), CaseFailure> {
        match self.unresponsive() {
            Some(message) => Err(CaseFailure::harness(format!("not asked: {message}"))),
            None => Ok(()),
        }
    }

    /// The harness error of a producer fault, after restarting the producer (unless another
    /// request's fault restarted it since this one was sent, on `generation`).
    pub(super) fn fault(&self, generation: u64, fault: ProducerFault) -> CaseFailure {
        if matches!(fault, ProducerFault::Stopped) {
            return CaseFailure::harness(format!(
                "the run was asked to stop and the producer did not answer the request in flight \
                 within {}s (the grace a case in flight gets to finish)",
                super::super::process::IN_FLIGHT_GRACE.as_secs()
            ));
        }
        let restarted = {
            let mut slot = lock(&self.producer);
            if slot.generation != generation {
                "restarted after another request's fault".to_owned()
            } else {
                slot.generation += 1;
                match slot.producer.restart(&fault) {
                    Ok(h) => {
                        *lock(&self.hello) = h;
                        "restarted".to_owned()
                    }
                    Err(e) => format!("restart failed too: {e}"),
                }
            }
        };
        CaseFailure::harness(format!(
            "{fault} (the producer was {restarted}; the run goes on)"
        ))
    }
}

/// Why a run stopped at `--max-consecutive-timeouts`.
pub(super) fn unresponsive_message(limit: u32, timeout: Duration) -> String {
    format!(
        "the producer timed out (--adapter-timeout {}s) on {limit} requests in a row, each \
         after a restart (--max-consecutive-timeouts {limit}), so the run stopped and the \
         remaining cases did not run: fix the producer's hang (its stderr is attached to the \
         cases that timed out), or raise --adapter-timeout if it is only slow",
        timeout.as_secs_f64()
    )
}

/// `message`, then the tail of the producer's stderr when it wrote any.
pub(super) fn with_stderr(message: &str, stderr: &str) -> String {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        return message.to_owned();
    }
    format!(
        "{message}\n  producer stderr:\n{}",
        last_bytes(stderr, STDERR_IN_MESSAGE)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_a_case_only_as_a_whole_name() {
        let case = "producer::payload::cj-1";
        assert!(names_case("request 3 for producer::payload::cj-1", case));
        assert!(names_case(
            "{\"case\":\"producer::payload::cj-1\"} done",
            case
        ));
        assert!(!names_case(
            "request 4 for producer::payload::cj-1::unique",
            case
        ));
        assert!(!names_case("request 5 for producer::payload::cj-10", case));
        assert!(!names_case("no case here", case));
    }

    #[test]
    fn the_kept_output_is_the_tail_cut_at_a_character() {
        let long = format!("{}é{}", "a".repeat(3000), "b".repeat(2047));
        let kept = tail(&long);
        assert!(kept.len() <= OUTPUT_KEPT && kept.ends_with('b'));
        assert!(kept.chars().all(|c| c == 'b'), "the cut never splits é");
        assert_eq!(tail("short\n"), "short");
    }
}
