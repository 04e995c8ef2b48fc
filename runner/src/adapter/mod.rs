//! The producer adapter protocol: check a third-party producer's client-side functions
//! against the vectors through a child process speaking JSON lines (docs/adapter-protocol.md).
//!
//! The runner spawns the adapter once (`sh -c <cmd>`), reads its `hello` (protocol version,
//! implementation, capabilities), sends one request per vector of every declared family,
//! then `stop`, and collects the answers. Writing and reading run on separate threads, so an
//! adapter that answers while requests are still being written can never deadlock on a full
//! pipe. All I/O happens before the trials run; each trial (`adapter::<family>::<id>`) then
//! only compares the recorded answer with the vector's `expected`.
//!
//! Outcomes: an answer equal to `expected` passes; a different answer or an adapter-reported
//! `error` is a finding (exit 1); `skipped` and undeclared families are not applicable; a
//! crash, a protocol violation or a timeout is a harness error (exit 6).
//!
//! # Wiring
//! `awa-conformance --adapter "<shell command>"` (a `run` option): the run calls [`exchange`],
//! records [`Session::problems`] as run errors (exit 6) and adds [`trials`] to the other suites,
//! so filters, expected failures and reports treat adapter cases like any other.
//!
//! `process.rs` holds the exchange with the child process; this file its bounds and results
//! (`Limits`, `Session`), which vectors an adapter is sent, and the trials.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use awa_conformance_vectors::{Case as VCase, Family, Vector, VectorSet};
use libtest_mimic::Trial;
use serde_json::Value as Json;

use crate::contract::features::{Feature, Side};
use crate::contract::judge::Tally;
use crate::outcome::{CaseFailure, RunContext, Verdict};
use crate::protocol::{nested_not_spoken, speaks_nested, uses_nested, Hello, ERRORS_CAPABILITY};

mod process;

pub use process::{exchange, exchange_with};

/// The `suite` of every adapter trial.
pub const SUITE: &str = "adapter";
/// The one trial that judges the adapter as a whole: it declared at least one family and
/// did not skip every vector it was sent.
pub const COVERAGE_TRIAL: &str = "adapter::coverage";
/// Default bound on each wait for the adapter (interpreters start slowly); `--adapter-timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest line the adapter may write (bytes, without the newline). The largest answer
/// of v1 is a few kilobytes; a longer line is a harness error and is never held in memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Why the exchange could not even start (exit 6).
#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    /// The command could not be spawned.
    #[error("cannot start adapter `{cmd}`: {reason}")]
    Spawn {
        /// The command.
        cmd: String,
        /// The OS error.
        reason: String,
    },
    /// No valid hello.
    #[error("adapter `{cmd}` sent no valid hello: {reason}; the first stdout line must be {{\"type\":\"hello\",\"protocol\":1,...}} (docs/adapter-protocol.md)")]
    Hello {
        /// The command.
        cmd: String,
        /// What was wrong.
        reason: String,
    },
    /// The run was asked to stop (signal, closed stdout) while talking to the adapter.
    #[error("adapter `{cmd}` was stopped because the run was asked to stop")]
    Stopped {
        /// The command.
        cmd: String,
    },
}

impl From<AdapterError> for crate::error::Error {
    fn from(e: AdapterError) -> Self {
        Self::caused(crate::error::Kind::Harness, e)
    }
}

/// Bounds of one exchange and how to tell that the run was asked to stop.
pub struct Limits<'a> {
    /// Bound on the hello, on the silence between answers, and on the exit after `stop`.
    pub timeout: Duration,
    /// Longest accepted line, in bytes.
    pub max_line: usize,
    /// True once the run must stop (checked every few milliseconds while waiting).
    pub stopped: &'a (dyn Fn() -> bool + Sync),
}

fn never() -> bool {
    false
}

impl Default for Limits<'_> {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_line: MAX_LINE_BYTES,
            stopped: &never,
        }
    }
}

impl std::fmt::Debug for Limits<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("timeout", &self.timeout)
            .field("max_line", &self.max_line)
            .finish_non_exhaustive()
    }
}

/// One recorded answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// The adapter's output object.
    Output(Json),
    /// The adapter skipped the vector, with a reason.
    Skipped(String),
    /// The adapter reported an error for a valid vector.
    Error(String),
}

/// The result of one exchange.
#[derive(Debug)]
pub struct Session {
    /// The hello.
    pub hello: Hello,
    /// Answers by vector ID.
    pub answers: BTreeMap<String, Answer>,
    /// How many requests were sent (one per vector of every declared family).
    pub requested: usize,
    /// Harness problems (crash, protocol violation, timeout, non-zero exit), in order.
    pub problems: Vec<String>,
}

/// Why the adapter is not sent `v` (an undeclared family, a rejected input without the
/// `errors` capability, or an input in the `nested` form it does not speak), or `None` when
/// it is.
fn not_declared(hello: &Hello, family: Family, v: &Vector, input: &Json) -> Option<String> {
    let has = |c: &str| hello.capabilities.iter().any(|x| x == c);
    if !has(family.as_str()) {
        Some(format!("does not declare capability {family}"))
    } else if matches!(v.case, VCase::Rejected(_)) && !has(ERRORS_CAPABILITY) {
        Some(format!(
            "does not declare capability {ERRORS_CAPABILITY} (vectors whose expected answer is an error)"
        ))
    } else if uses_nested(input) && !speaks_nested(hello.protocol, &hello.capabilities) {
        Some(format!(
            "is not sent this vector: {}",
            nested_not_spoken(hello.protocol)
        ))
    } else {
        None
    }
}

/// The `input` object of vector `i` as written in its file.
fn raw_input(raw: Option<&Vec<Json>>, i: usize) -> Json {
    raw.and_then(|r| r.get(i))
        .and_then(|r| r.get("input"))
        .cloned()
        .unwrap_or(Json::Null)
}

/// Compare an output with a vector's `expected`: every expected key must be equal (extra
/// output keys are ignored); a rotor's `enqueue_shard: null` accepts null or `[0, width)`.
fn compare(expected: &Json, input: &Json, output: &Json) -> Result<(), CaseFailure> {
    crate::contract::judge::answer("adapter output", expected, input, output)
}

/// The name of every adapter trial, known without starting the adapter (for `--list` and the
/// expected-failures check): `adapter::<family>::<id>` for every vector.
#[must_use]
pub fn trial_names(vectors: &VectorSet) -> Vec<String> {
    std::iter::once(COVERAGE_TRIAL.to_owned())
        .chain(vectors.files.iter().flat_map(|f| {
            f.vectors
                .iter()
                .map(move |v| format!("{SUITE}::{}::{}", f.family, v.id))
        }))
        .collect()
}

/// The adapter as a whole: it must declare a family, and answer (not skip) at least one
/// vector of each family it declares (the coverage rule, [`crate::contract::judge::coverage`]);
/// otherwise it checked nothing there and cannot be called conformant (a finding, exit 1).
fn coverage(vectors: &VectorSet, session: &Session) -> Result<(), CaseFailure> {
    let name = &session.hello.implementation.name;
    if session.hello.capabilities.is_empty() {
        return Err(CaseFailure::new(format!(
            "adapter {name} declares no family, so nothing was checked; list the families it \
             implements in hello.capabilities (docs/adapter-protocol.md)"
        )));
    }
    let mut tallies = BTreeMap::new();
    for file in &vectors.files {
        let family = file.family.as_str();
        if !session.hello.capabilities.iter().any(|c| c == family) {
            continue;
        }
        let tally: &mut Tally = tallies.entry(family.to_owned()).or_default();
        for answer in file
            .vectors
            .iter()
            .filter_map(|v| session.answers.get(&v.id))
        {
            if matches!(answer, Answer::Skipped(_)) {
                tally.skipped += 1;
            } else {
                tally.answered += 1;
            }
        }
    }
    crate::contract::judge::coverage(&format!("adapter {name}"), "vectors", &tallies)
}

/// [`COVERAGE_TRIAL`], then one trial per vector: `adapter::<family>::<id>`.
#[must_use]
pub fn trials(ctx: &Arc<RunContext>, vectors: &VectorSet, session: &Arc<Session>) -> Vec<Trial> {
    let mut out = Vec::new();
    let verdict = coverage(vectors, session);
    out.push(ctx.pure_trial(SUITE, COVERAGE_TRIAL.to_owned(), move || {
        verdict.map(|()| Verdict::Passed)
    }));
    for file in &vectors.files {
        let family: Family = file.family;
        let raw = file.json.get("vectors").and_then(Json::as_array);
        for (i, v) in file.vectors.iter().enumerate() {
            let name = format!("{SUITE}::{family}::{}", v.id);
            // The catalogue the run's per-feature verdict counts against (ADR 0062).
            if let Some(f) = Feature::of_vector(family, matches!(v.case, VCase::Rejected(_))) {
                ctx.declare_features(Side::Producer, &name, vec![f]);
            }
            if let Some(why) = not_declared(&session.hello, family, v, &raw_input(raw, i)) {
                out.push(ctx.not_applicable(
                    SUITE,
                    name,
                    format!("adapter {} {why}", session.hello.implementation.name),
                ));
                continue;
            }
            let raw_v = raw.and_then(|r| r.get(i)).cloned().unwrap_or(Json::Null);
            let expected = raw_v.get("expected").cloned().unwrap_or(Json::Null);
            let input = raw_v.get("input").cloned().unwrap_or(Json::Null);
            let session = Arc::clone(session);
            let id = v.id.clone();
            out.push(
                ctx.pure_trial(SUITE, name, move || match session.answers.get(&id) {
                    Some(Answer::Output(o)) => {
                        compare(&expected, &input, o).map(|()| Verdict::Passed)
                    }
                    Some(Answer::Skipped(reason)) => Ok(Verdict::Skipped(format!(
                        "skipped by the adapter: {reason}"
                    ))),
                    Some(Answer::Error(msg)) => {
                        Err(CaseFailure::new(match expected.get("error") {
                            Some(code) => format!(
                                "the adapter failed ({msg}) instead of refusing the input with \
                             {{\"output\":{{\"error\":{code}}}}}"
                            ),
                            None => {
                                format!("the adapter reported an error for a valid vector: {msg}")
                            }
                        }))
                    }
                    None => Err(CaseFailure::harness(format!(
                        "no answer from the adapter: {}",
                        if session.problems.is_empty() {
                            "unknown reason".to_owned()
                        } else {
                            session.problems.join("; ")
                        }
                    ))),
                }),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::process::{parse_answer, parse_hello, requests};
    use super::*;
    use crate::protocol::{Implementation, NESTED_CAPABILITY};
    use serde_json::json;

    #[test]
    fn hello_parsing() {
        let h = parse_hello(
            r#"{"type":"hello","protocol":1,"implementation":{"name":"x","version":"1"},"capabilities":["move_shard"]}"#,
        )
        .unwrap();
        assert_eq!(h.capabilities, ["move_shard"]);
        // `errors` is a capability too (release v1.1's expected-error vectors), not a family.
        let h =
            parse_hello(r#"{"type":"hello","protocol":1,"capabilities":["move_shard","errors"]}"#)
                .unwrap();
        assert_eq!(h.capabilities, ["move_shard", "errors"]);
        assert!(parse_hello(r#"{"type":"hello","protocol":4,"capabilities":[]}"#).is_err());
        assert!(parse_hello(r#"{"type":"hello","protocol":0,"capabilities":[]}"#).is_err());
        // Protocol 3 (job fields), and `nested` as a capability of an older program.
        let h =
            parse_hello(r#"{"type":"hello","protocol":3,"capabilities":["unique_key"]}"#).unwrap();
        assert!(speaks_nested(h.protocol, &h.capabilities));
        let h = parse_hello(r#"{"type":"hello","protocol":1,"capabilities":["nested"]}"#).unwrap();
        assert!(speaks_nested(h.protocol, &h.capabilities));
        // Protocol 2 (enqueue) programs may declare families too.
        let h =
            parse_hello(r#"{"type":"hello","protocol":2,"capabilities":["move_shard","enqueue"]}"#)
                .unwrap();
        assert_eq!(h.capabilities, ["move_shard", "enqueue"]);
        assert!(parse_hello("hello").is_err());
        assert!(parse_hello(r#"{"type":"hello","protocol":1}"#).is_err());
        let err =
            parse_hello(r#"{"type":"hello","protocol":1,"capabilities":["move_shard","routing"]}"#)
                .unwrap_err();
        assert!(err.contains("unknown capability routing"), "{err}");
        assert!(
            err.contains("routing_precedence"),
            "lists the known names: {err}"
        );
    }

    fn session(capabilities: &[&str], answers: BTreeMap<String, Answer>) -> Session {
        Session {
            hello: Hello {
                protocol: 1,
                implementation: Implementation {
                    name: "t".into(),
                    version: "1".into(),
                },
                capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
                max_in_flight: None,
            },
            requested: answers.len(),
            answers,
            problems: Vec::new(),
        }
    }

    #[test]
    fn an_adapter_that_declares_nothing_or_skips_a_whole_family_is_not_conformant() {
        let set = awa_conformance_vectors::v1().unwrap();
        let err = coverage(&set, &session(&[], BTreeMap::new())).unwrap_err();
        assert!(
            err.message.contains("declares no family"),
            "{}",
            err.message
        );

        let ms = set.file(Family::MoveShard).unwrap();
        let skipped: BTreeMap<String, Answer> = ms
            .vectors
            .iter()
            .map(|v| (v.id.clone(), Answer::Skipped("no".into())))
            .collect();
        let err = coverage(&set, &session(&["move_shard"], skipped.clone())).unwrap_err();
        assert!(err.message.contains("move_shard"), "{}", err.message);

        // One answered vector is enough for coverage (its own trial judges it).
        let mut one = skipped;
        let first = ms.vectors[0].id.clone();
        one.insert(first, Answer::Output(json!({})));
        assert!(coverage(&set, &session(&["move_shard"], one)).is_ok());
    }

    #[test]
    fn answers_and_compare() {
        assert!(matches!(
            parse_answer(r#"{"seq":3,"output":{"shard":1}}"#),
            Ok((3, Answer::Output(_)))
        ));
        assert!(matches!(
            parse_answer(r#"{"seq":3,"skipped":true,"reason":"r"}"#),
            Ok((3, Answer::Skipped(_)))
        ));
        assert!(matches!(
            parse_answer(r#"{"seq":3,"error":"e"}"#),
            Ok((3, Answer::Error(_)))
        ));
        assert!(parse_answer(r#"{"seq":3}"#).is_err());
        let exp =
            json!({"route_source":"rotor","enqueue_shard":null,"concurrency_digest_hex":null});
        let input = json!({"width": 4});
        let mut out = exp.clone();
        out["enqueue_shard"] = json!(3);
        assert!(compare(&exp, &input, &out).is_ok());
        out["enqueue_shard"] = json!(4);
        assert!(compare(&exp, &input, &out).is_err());
        assert!(compare(&json!({"shard": 1}), &input, &json!({"shard": 2})).is_err());
        assert!(compare(&json!({"shard": 1}), &input, &json!({})).is_err());
        assert!(compare(&json!({"d": null}), &input, &json!({})).is_err());
        // An expected-error vector: only the refusal with the same code passes.
        let refused = json!({"error": "invalid_width"});
        assert!(compare(&refused, &input, &json!({"error": "invalid_width"})).is_ok());
        assert!(compare(&refused, &input, &json!({"error": "key_too_long"})).is_err());
        assert!(compare(&refused, &input, &json!({"shard": 3})).is_err());
    }

    #[test]
    fn expected_error_vectors_need_the_errors_capability() {
        let set = awa_conformance_vectors::embedded().unwrap();
        let (family, rejected) = set
            .iter()
            .find(|(_, v)| matches!(v.case, VCase::Rejected(_)))
            .unwrap();
        let (_, plain) = set
            .iter()
            .find(|(f, v)| *f == family && !matches!(v.case, VCase::Rejected(_)))
            .unwrap();
        let hello = |caps: &[&str], protocol: u64| Hello {
            protocol,
            implementation: Implementation {
                name: "t".to_owned(),
                version: "1".to_owned(),
            },
            capabilities: caps.iter().map(|c| (*c).to_owned()).collect(),
            max_in_flight: None,
        };
        // Protocol 3: some rejected vectors hold the `nested` form (values nested 129 deep).
        let only_family = hello(&[family.as_str()], 3);
        let with_errors = hello(&[family.as_str(), ERRORS_CAPABILITY], 3);
        let none = Json::Null;
        assert!(not_declared(&only_family, family, plain, &none).is_none());
        let why = not_declared(&only_family, family, rejected, &none).unwrap();
        assert!(why.contains(ERRORS_CAPABILITY), "{why}");
        assert!(not_declared(&with_errors, family, rejected, &none).is_none());
        assert!(not_declared(&hello(&[ERRORS_CAPABILITY], 3), family, rejected, &none).is_some());
        let sent = |h: &Hello| {
            requests(&set, h)
                .iter()
                .filter(|r| r.id == rejected.id)
                .count()
        };
        assert_eq!(sent(&only_family), 0);
        assert_eq!(sent(&with_errors), 1);
    }

    /// ADR 0053: a program is sent the compact `nested` form only when its protocol (3) or
    /// its `nested` capability says it decodes it; otherwise that vector is not applicable,
    /// with the reason, and is never sent.
    #[test]
    fn the_nested_form_goes_only_to_programs_that_speak_it() {
        let set = awa_conformance_vectors::embedded().unwrap();
        let nested_ids: Vec<String> = set
            .files
            .iter()
            .flat_map(|f| {
                let raw = f.json.get("vectors").and_then(Json::as_array);
                f.vectors
                    .iter()
                    .enumerate()
                    .filter(move |(i, _)| uses_nested(&raw_input(raw, *i)))
                    .map(|(_, v)| v.id.clone())
            })
            .collect();
        assert!(nested_ids.len() >= 3, "{nested_ids:?}");
        let all = ["canonical_json", "unique_key", ERRORS_CAPABILITY];
        let with = |protocol: u64, extra: &[&str]| Hello {
            protocol,
            implementation: Implementation {
                name: "t".to_owned(),
                version: "1".to_owned(),
            },
            capabilities: all.iter().chain(extra).map(|c| (*c).to_owned()).collect(),
            max_in_flight: None,
        };
        let sent = |h: &Hello| {
            requests(&set, h)
                .iter()
                .filter(|r| nested_ids.contains(&r.id))
                .count()
        };
        assert_eq!(sent(&with(1, &[])), 0);
        assert_eq!(sent(&with(2, &[])), 0);
        assert_eq!(sent(&with(1, &[NESTED_CAPABILITY])), nested_ids.len());
        assert_eq!(sent(&with(3, &[])), nested_ids.len());
        // Every other vector of those families is still sent to the older program.
        assert!(requests(&set, &with(1, &[]))
            .iter()
            .all(|r| !r.line.contains("\"nested\"")));
        let (family, v, i, raw) = set
            .files
            .iter()
            .find_map(|f| {
                let raw = f.json.get("vectors").and_then(Json::as_array);
                f.vectors
                    .iter()
                    .enumerate()
                    .find(|(i, _)| uses_nested(&raw_input(raw, *i)))
                    .map(|(i, v)| (f.family, v, i, raw))
            })
            .unwrap();
        let why = not_declared(&with(1, &[]), family, v, &raw_input(raw, i)).unwrap();
        assert!(
            why.contains("protocol 1") && why.contains(NESTED_CAPABILITY),
            "{why}"
        );
    }
}

#[cfg(test)]
mod process_tests {
    use super::*;
    use std::process::Command;

    const PY: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/adapters/python/adapter.py"
    );

    fn set() -> VectorSet {
        awa_conformance_vectors::v1().unwrap()
    }

    /// Compare every answer directly (what the trials do).
    fn verdicts(set: &VectorSet, s: &Session) -> (usize, Vec<String>) {
        let mut passed = 0;
        let mut failed = Vec::new();
        for file in &set.files {
            let raw = file.json["vectors"].as_array().unwrap();
            for (i, v) in file.vectors.iter().enumerate() {
                if let Some(Answer::Output(o)) = s.answers.get(&v.id) {
                    match compare(&raw[i]["expected"], &raw[i]["input"], o) {
                        Ok(()) => passed += 1,
                        Err(_) => failed.push(v.id.clone()),
                    }
                }
            }
        }
        (passed, failed)
    }

    fn python() -> bool {
        Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn python_reference_adapter_agrees_with_every_declared_vector() {
        assert!(python(), "python3 is required for the adapter tests");
        let set = set();
        let s = exchange(&format!("python3 {PY}"), None, &set).unwrap();
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        for fam in [
            "concurrency_digest",
            "routing_precedence",
            "ordering_shard",
            "partition",
        ] {
            assert!(
                s.hello.capabilities.iter().any(|c| c == fam),
                "{fam} not declared"
            );
        }
        let (passed, failed) = verdicts(&set, &s);
        assert!(failed.is_empty(), "{failed:?}");
        assert!(passed > 900, "only {passed} answers compared");
    }

    #[test]
    fn broken_adapter_fails_its_family() {
        let set = set();
        let s = exchange(
            "python3 ../tests/mutants/materialise.py --exec adapter-python untagged_digest",
            None,
            &set,
        )
        .unwrap();
        let (_, failed) = verdicts(&set, &s);
        let cd = set.file(Family::ConcurrencyDigest).unwrap().vectors.len();
        assert_eq!(failed.len(), cd, "{failed:?}");
        assert!(failed.iter().all(|id| id.starts_with("cd-")));
    }

    #[test]
    fn crash_and_protocol_errors_are_problems() {
        let set = set();
        let hello = r#"{"type":"hello","protocol":1,"implementation":{"name":"t"},"capabilities":["move_shard"]}"#;
        let s = exchange(&format!("echo '{hello}'; exit 3"), None, &set).unwrap();
        assert!(s.answers.is_empty());
        assert!(
            s.problems.iter().any(|p| p.contains("closed stdout")),
            "{:?}",
            s.problems
        );
        assert!(
            s.problems.iter().any(|p| p.contains("exited with")),
            "{:?}",
            s.problems
        );
        let s = exchange(
            &format!("echo '{hello}'; echo garbage; cat >/dev/null"),
            None,
            &set,
        )
        .unwrap();
        assert!(
            s.problems.iter().any(|p| p.contains("protocol violation")),
            "{:?}",
            s.problems
        );
        assert!(matches!(
            exchange("echo nope", None, &set),
            Err(AdapterError::Hello { .. })
        ));
        assert!(matches!(
            exchange(
                r#"echo '{"type":"hello","protocol":9,"capabilities":[]}'"#,
                None,
                &set
            ),
            Err(AdapterError::Hello { .. })
        ));
    }
}
