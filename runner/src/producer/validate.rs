//! `--validate-producer`: a smoke test of a producer's protocol alone, with canned requests
//! and no judgement of what it stores: for people writing a producer, before the full run.
//!
//! The exchange runs once, in order (hello, three requests, stop), before the trials; each
//! step becomes a trial `producer::protocol::<step>` that reports what was recorded. The jobs
//! it enqueues are in run-scoped queues, removed with the run's other rows.

use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::Trial;
use serde_json::json;

use super::{Producer, SUITE};
use crate::outcome::{CaseFailure, RunContext, Verdict};
use crate::protocol::{EnqueueAnswer, EnqueueRequest, Job, UniqueInputs, ERRORS_CAPABILITY};

/// The steps, in order.
pub const STEPS: [&str; 5] = ["hello", "enqueue_plain", "enqueue_keyed", "refusal", "stop"];

/// Every validation trial name.
#[must_use]
pub fn trial_names() -> Vec<String> {
    STEPS
        .iter()
        .map(|s| format!("{SUITE}::protocol::{s}"))
        .collect()
}

fn job(queue: &str) -> Job {
    Job::plain(
        super::steps::PROBE_KIND,
        queue,
        json!({"type": "object", "value": [["n", {"type": "int", "value": "1"}]]}),
    )
}

/// Run the canned exchange with `producer`; one outcome per step of [`STEPS`].
#[must_use]
pub fn validate(
    producer: &mut dyn Producer,
    schema: &str,
    queue_prefix: &str,
    timeout: Duration,
) -> Vec<(&'static str, Result<Verdict, CaseFailure>)> {
    let mut out: Vec<(&'static str, Result<Verdict, CaseFailure>)> = Vec::new();
    let hello = match producer.hello() {
        Ok(h) => h,
        Err(e) => {
            let why = format!("{e}\n  producer stderr:\n{}", producer.take_diagnostics());
            out.push(("hello", Err(CaseFailure::harness(why.clone()))));
            for s in STEPS.iter().skip(1) {
                out.push((s, Err(CaseFailure::harness(format!("no hello: {why}")))));
            }
            return out;
        }
    };
    out.push((
        "hello",
        hello
            .check_enqueue()
            .map(|()| Verdict::Passed)
            .map_err(CaseFailure::new),
    ));
    let plain = job(&format!("{queue_prefix}v_plain"));
    let mut keyed = job(&format!("{queue_prefix}v_keyed"));
    keyed.ordering_key_hex = Some("80ff00".to_owned());
    keyed.concurrency_key_hex = Some("74656e616e742d3432".to_owned());
    keyed.unique = Some(UniqueInputs {
        by_queue: true,
        by_args: true,
        period_bucket: Some("472222".to_owned()),
    });
    keyed.unique_states = Some("11111000".to_owned());
    let mut bad = job(&format!("{queue_prefix}v_refusal"));
    bad.unique = Some(UniqueInputs {
        by_queue: true,
        by_args: false,
        period_bucket: None,
    });
    bad.unique_states = Some("1111".to_owned());
    let errors = hello.has(ERRORS_CAPABILITY);
    for (seq, (step, job)) in [
        ("enqueue_plain", plain),
        ("enqueue_keyed", keyed),
        ("refusal", bad),
    ]
    .into_iter()
    .enumerate()
    {
        let request = EnqueueRequest {
            seq: seq as u64 + 1,
            case: format!("{SUITE}::protocol::{step}"),
            schema: schema.to_owned(),
            job: job.for_protocol(hello.protocol),
        };
        let answer = producer.enqueue(&request, timeout);
        let stderr = producer.take_diagnostics();
        let with = |m: String| {
            if stderr.trim().is_empty() {
                m
            } else {
                format!("{m}\n  producer stderr:\n{stderr}")
            }
        };
        let verdict = match (step, answer) {
            (_, Err(e)) => {
                let _ = producer.restart(&e);
                Err(CaseFailure::harness(with(e.to_string())))
            }
            (_, Ok(EnqueueAnswer::Skipped(r))) => {
                Ok(Verdict::Skipped(format!("skipped by the producer: {r}")))
            }
            ("refusal", Ok(EnqueueAnswer::Refused(_))) => Ok(Verdict::Passed),
            ("refusal", Ok(other)) if errors => Err(CaseFailure::new(with(format!(
                "unique_states '1111' must be refused (22026 or unique_states_not_8_bits), \
                 the producer answered {other:?}"
            )))),
            ("refusal", Ok(_)) => Ok(Verdict::NotApplicable(format!(
                "the producer does not declare {ERRORS_CAPABILITY}"
            ))),
            (_, Ok(EnqueueAnswer::Enqueued { .. })) => Ok(Verdict::Passed),
            (_, Ok(other)) => Err(CaseFailure::new(with(format!(
                "a valid job must be enqueued, the producer answered {other:?}"
            )))),
        };
        out.push((step, verdict));
    }
    out.push((
        "stop",
        producer
            .stop()
            .map(|()| Verdict::Passed)
            .map_err(|e| CaseFailure::harness(e.to_string())),
    ));
    out
}

/// The recorded steps as trials.
#[must_use]
pub fn trials(
    ctx: &Arc<RunContext>,
    steps: Vec<(&'static str, Result<Verdict, CaseFailure>)>,
) -> Vec<Trial> {
    steps
        .into_iter()
        .map(|(step, outcome)| {
            ctx.pure_trial(SUITE, format!("{SUITE}::protocol::{step}"), move || outcome)
        })
        .collect()
}
