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

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use awa_conformance_vectors::{Case as VCase, Family, Vector, VectorSet};
use libtest_mimic::Trial;
use serde_json::{json, Value as Json};

use crate::outcome::{CaseFailure, RunContext, Verdict};

/// The protocol version this runner speaks (`hello.protocol` must equal it).
pub const PROTOCOL_VERSION: u64 = 1;
/// The `suite` of every adapter trial.
pub const SUITE: &str = "adapter";
/// How long the adapter may take to say hello (interpreters start slowly).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the adapter may stay silent while answers are outstanding.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the adapter may take to exit after `stop`.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(10);
/// The capability an adapter declares to receive rejected-input vectors (`expected.error`),
/// which it answers with `{"output":{"error":"<code>"}}` (docs/adapter-protocol.md).
pub const ERRORS_CAPABILITY: &str = "errors";
/// Environment variable carrying the DSN to the adapter (when `--dsn` is given).
pub const DSN_ENV: &str = "AWA_CONFORMANCE_DSN";

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
}

impl From<AdapterError> for crate::error::Error {
    fn from(e: AdapterError) -> Self {
        Self::Harness {
            detail: e.to_string(),
        }
    }
}

/// The adapter's self-description.
#[derive(Debug, Clone)]
pub struct Hello {
    /// `implementation.name`.
    pub name: String,
    /// `implementation.version`.
    pub version: String,
    /// Declared families (plus any extra capability names).
    pub capabilities: Vec<String>,
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
    /// Harness problems (crash, protocol violation, timeout, non-zero exit), in order.
    pub problems: Vec<String>,
}

struct Request {
    seq: u64,
    id: String,
    line: String,
}

/// Why the adapter is not sent `v` (an undeclared family, or a rejected input without the
/// `errors` capability), or `None` when it is.
fn not_declared(capabilities: &[String], family: Family, v: &Vector) -> Option<String> {
    let has = |c: &str| capabilities.iter().any(|x| x == c);
    if !has(family.as_str()) {
        Some(format!("does not declare capability {family}"))
    } else if matches!(v.case, VCase::Rejected(_)) && !has(ERRORS_CAPABILITY) {
        Some(format!(
            "does not declare capability {ERRORS_CAPABILITY} (vectors whose expected answer is an error)"
        ))
    } else {
        None
    }
}

fn requests(vectors: &VectorSet, capabilities: &[String]) -> Vec<Request> {
    let mut out = Vec::new();
    let mut seq = 0u64;
    for file in &vectors.files {
        let raw = file.json.get("vectors").and_then(Json::as_array);
        for (i, v) in file.vectors.iter().enumerate() {
            if not_declared(capabilities, file.family, v).is_some() {
                continue;
            }
            let input = raw
                .and_then(|r| r.get(i))
                .and_then(|r| r.get("input"))
                .cloned()
                .unwrap_or(Json::Null);
            seq += 1;
            let line = json!({
                "type": "request",
                "seq": seq,
                "family": file.family.as_str(),
                "id": v.id,
                "input": input,
            })
            .to_string();
            out.push(Request {
                seq,
                id: v.id.clone(),
                line,
            });
        }
    }
    out
}

fn parse_hello(line: &str) -> Result<Hello, String> {
    let j: Json = serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line:.200}"))?;
    if j.get("type").and_then(Json::as_str) != Some("hello") {
        return Err(format!("first line is not a hello: {line:.200}"));
    }
    let protocol = j.get("protocol").and_then(Json::as_u64);
    if protocol != Some(PROTOCOL_VERSION) {
        return Err(format!(
            "protocol {protocol:?}, this runner speaks {PROTOCOL_VERSION}"
        ));
    }
    let imp = j.get("implementation").cloned().unwrap_or(Json::Null);
    let capabilities = j
        .get("capabilities")
        .and_then(Json::as_array)
        .ok_or("hello.capabilities must be an array of family names")?
        .iter()
        .map(|c| {
            c.as_str()
                .map(str::to_owned)
                .ok_or("capabilities must be strings")
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Hello {
        name: imp
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("unnamed")
            .to_owned(),
        version: imp
            .get("version")
            .and_then(Json::as_str)
            .unwrap_or("unknown")
            .to_owned(),
        capabilities,
    })
}

fn parse_answer(line: &str) -> Result<(u64, Answer), String> {
    let j: Json =
        serde_json::from_str(line).map_err(|e| format!("answer is not JSON ({e}): {line:.200}"))?;
    let seq = j
        .get("seq")
        .and_then(Json::as_u64)
        .ok_or_else(|| format!("answer without an integer seq: {line:.200}"))?;
    if let Some(o) = j.get("output") {
        return Ok((seq, Answer::Output(o.clone())));
    }
    if j.get("skipped").and_then(Json::as_bool) == Some(true) {
        let reason = j
            .get("reason")
            .and_then(Json::as_str)
            .unwrap_or("skipped by the adapter")
            .to_owned();
        return Ok((seq, Answer::Skipped(reason)));
    }
    if let Some(e) = j.get("error") {
        let msg = e.as_str().map_or_else(|| e.to_string(), str::to_owned);
        return Ok((seq, Answer::Error(msg)));
    }
    Err(format!(
        "answer {seq} has none of output / skipped / error: {line:.200}"
    ))
}

fn spawn(cmd: &str, dsn: Option<&str>) -> Result<Child, AdapterError> {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // The adapter's own diagnostics go straight to the user.
        .stderr(Stdio::inherit());
    if let Some(d) = dsn {
        c.env(DSN_ENV, d);
    }
    c.spawn().map_err(|e| AdapterError::Spawn {
        cmd: cmd.to_owned(),
        reason: e.to_string(),
    })
}

/// Run the whole exchange with the adapter `cmd` (a shell command).
///
/// # Errors
/// [`AdapterError`] when the adapter cannot start or sends no valid hello; later problems
/// are recorded in [`Session::problems`] and become harness errors of the affected cases.
pub fn exchange(
    cmd: &str,
    dsn: Option<&str>,
    vectors: &VectorSet,
) -> Result<Session, AdapterError> {
    let mut child = spawn(cmd, dsn)?;
    let hello_err = |reason: String| AdapterError::Hello {
        cmd: cmd.to_owned(),
        reason,
    };
    let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
        (Some(i), Some(o)) => (i, o),
        _ => return Err(hello_err("stdio pipes unavailable".to_owned())),
    };
    let (tx, rx) = mpsc::channel::<std::io::Result<String>>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let stop = line.is_err();
            if tx.send(line).is_err() || stop {
                break;
            }
        }
    });
    let finish = |mut child: Child| {
        let _ = child.kill();
        let _ = child.wait();
    };
    let hello = match rx.recv_timeout(HELLO_TIMEOUT) {
        Ok(Ok(line)) => match parse_hello(&line) {
            Ok(h) => h,
            Err(e) => {
                finish(child);
                return Err(hello_err(e));
            }
        },
        Ok(Err(e)) => {
            finish(child);
            return Err(hello_err(e.to_string()));
        }
        Err(_) => {
            finish(child);
            return Err(hello_err(format!(
                "no line within {HELLO_TIMEOUT:?} (or the adapter exited)"
            )));
        }
    };
    let reqs = requests(vectors, &hello.capabilities);
    let ids: BTreeMap<u64, String> = reqs.iter().map(|r| (r.seq, r.id.clone())).collect();
    let lines: Vec<String> = reqs.into_iter().map(|r| r.line).collect();
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(stdin);
        for l in &lines {
            w.write_all(l.as_bytes())?;
            w.write_all(b"\n")?;
        }
        w.write_all(b"{\"type\":\"stop\"}\n")?;
        w.flush()
        // Dropping the writer closes stdin: EOF also means stop.
    });
    let mut answers = BTreeMap::new();
    let mut problems = Vec::new();
    while answers.len() < ids.len() {
        match rx.recv_timeout(ANSWER_TIMEOUT) {
            Ok(Ok(line)) if line.trim().is_empty() => {}
            Ok(Ok(line)) => match parse_answer(&line) {
                Ok((seq, answer)) => match ids.get(&seq) {
                    Some(id) if !answers.contains_key(id) => {
                        answers.insert(id.clone(), answer);
                    }
                    Some(id) => problems.push(format!("adapter answered seq {seq} ({id}) twice")),
                    None => problems.push(format!("adapter answered unknown seq {seq}")),
                },
                Err(e) => {
                    problems.push(format!("protocol violation: {e}"));
                    break;
                }
            },
            Ok(Err(e)) => {
                problems.push(format!("reading the adapter's stdout failed: {e}"));
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                problems.push(format!(
                    "adapter silent for {ANSWER_TIMEOUT:?} with {} answers outstanding",
                    ids.len() - answers.len()
                ));
                break;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                problems.push(format!(
                    "adapter closed stdout (exited or crashed) with {} answers outstanding",
                    ids.len() - answers.len()
                ));
                break;
            }
        }
    }
    if let Ok(Err(e)) = writer.join() {
        if answers.len() < ids.len() {
            problems.push(format!("writing requests failed: {e}"));
        }
    }
    let deadline = Instant::now() + EXIT_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => break,
            Ok(Some(status)) => {
                problems.push(format!("adapter exited with {status}"));
                break;
            }
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                problems.push(format!(
                    "adapter did not exit within {EXIT_TIMEOUT:?} after stop"
                ));
                finish(child);
                break;
            }
            Err(e) => {
                problems.push(format!("waiting for the adapter failed: {e}"));
                break;
            }
        }
    }
    let _ = reader.join();
    Ok(Session {
        hello,
        answers,
        problems,
    })
}

/// Compare an output with a vector's `expected`: every expected key must be equal (extra
/// output keys are ignored); a rotor's `enqueue_shard: null` accepts null or `[0, width)`.
fn compare(expected: &Json, input: &Json, output: &Json) -> Result<(), CaseFailure> {
    let Some(want) = expected.as_object() else {
        return Err(CaseFailure::harness("vector without an expected object"));
    };
    let mut differs = Vec::new();
    for (k, v) in want {
        let got = output.get(k).unwrap_or(&Json::Null);
        let ok = if k == "enqueue_shard" && v.is_null() {
            let width = input.get("width").and_then(Json::as_u64).unwrap_or(1);
            got.is_null() || got.as_u64().is_some_and(|s| s < width)
        } else {
            got == v && output.get(k).is_some()
        };
        if !ok {
            differs.push(k.clone());
        }
    }
    if differs.is_empty() {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!("adapter output differs in {}", differs.join(", ")),
        expected.clone(),
        output.clone(),
    ))
}

/// The name of every adapter trial, known without starting the adapter (for `--list` and the
/// expected-failures check): `adapter::<family>::<id>` for every vector.
#[must_use]
pub fn trial_names(vectors: &VectorSet) -> Vec<String> {
    vectors
        .files
        .iter()
        .flat_map(|f| {
            f.vectors
                .iter()
                .map(move |v| format!("{SUITE}::{}::{}", f.family, v.id))
        })
        .collect()
}

/// One trial per vector: `adapter::<family>::<id>`.
#[must_use]
pub fn trials(ctx: &Arc<RunContext>, vectors: &VectorSet, session: &Arc<Session>) -> Vec<Trial> {
    let mut out = Vec::new();
    for file in &vectors.files {
        let family: Family = file.family;
        let raw = file.json.get("vectors").and_then(Json::as_array);
        for (i, v) in file.vectors.iter().enumerate() {
            let name = format!("{SUITE}::{family}::{}", v.id);
            if let Some(why) = not_declared(&session.hello.capabilities, family, v) {
                out.push(ctx.not_applicable(
                    SUITE,
                    name,
                    format!("adapter {} {why}", session.hello.name),
                ));
                continue;
            }
            let raw_v = raw.and_then(|r| r.get(i)).cloned().unwrap_or(Json::Null);
            let expected = raw_v.get("expected").cloned().unwrap_or(Json::Null);
            let input = raw_v.get("input").cloned().unwrap_or(Json::Null);
            let session = Arc::clone(session);
            let id = v.id.clone();
            out.push(
                ctx.trial_with(SUITE, name, move || match session.answers.get(&id) {
                    Some(Answer::Output(o)) => {
                        compare(&expected, &input, o).map(|()| Verdict::Passed)
                    }
                    Some(Answer::Skipped(reason)) => Ok(Verdict::NotApplicable(format!(
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
    use super::*;

    #[test]
    fn hello_parsing() {
        let h = parse_hello(
            r#"{"type":"hello","protocol":1,"implementation":{"name":"x","version":"1"},"capabilities":["move_shard"]}"#,
        )
        .unwrap();
        assert_eq!(h.capabilities, ["move_shard"]);
        assert!(parse_hello(r#"{"type":"hello","protocol":2,"capabilities":[]}"#).is_err());
        assert!(parse_hello("hello").is_err());
        assert!(parse_hello(r#"{"type":"hello","protocol":1}"#).is_err());
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
        let only_family = vec![family.as_str().to_owned()];
        let with_errors = vec![family.as_str().to_owned(), ERRORS_CAPABILITY.to_owned()];
        assert!(not_declared(&only_family, family, plain).is_none());
        let why = not_declared(&only_family, family, rejected).unwrap();
        assert!(why.contains(ERRORS_CAPABILITY), "{why}");
        assert!(not_declared(&with_errors, family, rejected).is_none());
        assert!(not_declared(&[ERRORS_CAPABILITY.to_owned()], family, rejected).is_some());
        let sent = |caps: &[String]| {
            requests(&set, caps)
                .iter()
                .filter(|r| r.id == rejected.id)
                .count()
        };
        assert_eq!(sent(&only_family), 0);
        assert_eq!(sent(&with_errors), 1);
    }
}

#[cfg(test)]
mod process_tests {
    use super::*;

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
            &format!("AWA_ADAPTER_BREAK=concurrency_digest python3 {PY}"),
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
