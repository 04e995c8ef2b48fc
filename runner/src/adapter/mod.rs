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
use std::io::Write;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use awa_conformance_vectors::{Case as VCase, Family, Vector, VectorSet};
use libtest_mimic::Trial;
use serde_json::{json, Value as Json};

use crate::child::{line_reader, recv_until, spawn, Group, Read, Stderr, Waited};
use crate::contract::judge::Tally;
use crate::outcome::{CaseFailure, RunContext, Verdict};
use crate::protocol::{
    nested_not_spoken, speaks_nested, uses_nested, Hello, Implementation, BULK_CAPABILITY, DSN_ENV,
    ENQUEUE_CAPABILITY, ERRORS_CAPABILITY, NESTED_CAPABILITY, PROTOCOL_FUNCTIONS, PROTOCOL_NEWEST,
};

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
/// How long the runner waits for its own reader and writer threads once the adapter's
/// process group is gone (they end at once unless a process escaped the group).
const THREAD_GRACE: Duration = Duration::from_secs(2);
/// Capabilities that name no family.
const NON_FAMILY_CAPABILITIES: [&str; 4] = [
    ERRORS_CAPABILITY,
    ENQUEUE_CAPABILITY,
    BULK_CAPABILITY,
    NESTED_CAPABILITY,
];

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

struct Request {
    seq: u64,
    id: String,
    line: String,
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

fn requests(vectors: &VectorSet, hello: &Hello) -> Vec<Request> {
    let mut out = Vec::new();
    let mut seq = 0u64;
    for file in &vectors.files {
        let raw = file.json.get("vectors").and_then(Json::as_array);
        for (i, v) in file.vectors.iter().enumerate() {
            let input = raw_input(raw, i);
            if not_declared(hello, file.family, v, &input).is_some() {
                continue;
            }
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
    // Protocols 2 and 3 add enqueue and job fields (crate::producer); their function
    // requests are protocol 1's.
    let protocol = j
        .get("protocol")
        .and_then(Json::as_u64)
        .filter(|p| (PROTOCOL_FUNCTIONS..=PROTOCOL_NEWEST).contains(p))
        .ok_or_else(|| {
            format!(
                "protocol {}, this runner speaks {PROTOCOL_FUNCTIONS} to \
                 {PROTOCOL_NEWEST}",
                j.get("protocol").unwrap_or(&Json::Null)
            )
        })?;
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
    // A misspelt family would otherwise just make its vectors "not applicable".
    let unknown: Vec<&str> = capabilities
        .iter()
        .map(String::as_str)
        .filter(|c| Family::parse(c).is_none() && !NON_FAMILY_CAPABILITIES.contains(c))
        .collect();
    if !unknown.is_empty() {
        let mut known: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
        known.extend(NON_FAMILY_CAPABILITIES);
        return Err(format!(
            "unknown capability {}; the known capabilities are {}",
            unknown.join(", "),
            known.join(", ")
        ));
    }
    let text = |key: &str, default: &str| {
        imp.get(key)
            .and_then(Json::as_str)
            .unwrap_or(default)
            .to_owned()
    };
    Ok(Hello {
        protocol,
        implementation: Implementation {
            name: text("name", "unnamed"),
            version: text("version", "unknown"),
        },
        capabilities,
        max_in_flight: None,
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

/// Run the whole exchange with the adapter `cmd` (a shell command), with default limits.
///
/// # Errors
/// See [`exchange_with`].
pub fn exchange(
    cmd: &str,
    dsn: Option<&str>,
    vectors: &VectorSet,
) -> Result<Session, AdapterError> {
    exchange_with(cmd, dsn, vectors, &Limits::default())
}

/// Run the whole exchange with the adapter `cmd` (a shell command).
///
/// Every wait is bounded by `limits.timeout` and every line by `limits.max_line`; the
/// adapter's whole process group is killed at the end, whatever happened.
///
/// # Errors
/// [`AdapterError`] when the adapter cannot start, sends no valid hello (or declares an
/// unknown family), or the run is asked to stop; later problems are recorded in
/// [`Session::problems`] and become harness errors of the affected cases.
pub fn exchange_with(
    cmd: &str,
    dsn: Option<&str>,
    vectors: &VectorSet,
    limits: &Limits<'_>,
) -> Result<Session, AdapterError> {
    let env: Vec<(&str, &str)> = dsn.map(|d| (DSN_ENV, d)).into_iter().collect();
    // Its diagnostics go to the user, line by line, masked and inert (child::forward).
    let mut child = spawn(cmd, &env, Stderr::Forward).map_err(|e| AdapterError::Spawn {
        cmd: cmd.to_owned(),
        reason: e.to_string(),
    })?;
    let hello_err = |reason: String| AdapterError::Hello {
        cmd: cmd.to_owned(),
        reason,
    };
    let (stdin, stdout) = match (child.stdin.take(), child.stdout.take()) {
        (Some(i), Some(o)) => (i, o),
        _ => {
            let _ = Group::new(child).end();
            return Err(hello_err("stdio pipes unavailable".to_owned()));
        }
    };
    let group = Group::new(child);
    let max_line = limits.max_line;
    let rx = match line_reader(stdout, max_line, "awa-adapter-out") {
        Ok(rx) => rx,
        Err(e) => {
            let _ = group.end();
            return Err(hello_err(format!("cannot start the reader thread: {e}")));
        }
    };
    let too_long = || {
        format!(
            "a line longer than {max_line} bytes (docs/adapter-protocol.md: one short JSON              object per line)"
        )
    };
    let hello = match recv_until(&rx, Instant::now() + limits.timeout, limits.stopped) {
        Ok(Read::Line(line)) => parse_hello(&line),
        Ok(Read::TooLong) => Err(too_long()),
        Ok(Read::NotUtf8) => Err("the first line is not UTF-8".to_owned()),
        Ok(Read::Failed(e)) => Err(e.to_string()),
        Err(Waited::Timeout) => Err(format!(
            "no line within {}s (--adapter-timeout)",
            limits.timeout.as_secs_f64()
        )),
        Err(Waited::Closed) => Err("it closed stdout (exited or crashed) first".to_owned()),
        Err(Waited::Stopped) => {
            let _ = group.end();
            return Err(AdapterError::Stopped {
                cmd: cmd.to_owned(),
            });
        }
    };
    let hello = match hello {
        Ok(h) => h,
        Err(reason) => {
            let _ = group.end();
            return Err(hello_err(reason));
        }
    };
    let reqs = requests(vectors, &hello);
    let ids: BTreeMap<u64, String> = reqs.iter().map(|r| (r.seq, r.id.clone())).collect();
    let lines: Vec<String> = reqs.into_iter().map(|r| r.line).collect();
    let (wtx, wrx) = mpsc::channel::<std::io::Result<()>>();
    let writer = std::thread::Builder::new()
        .name("awa-adapter-in".into())
        .spawn(move || {
            let result = (|| -> std::io::Result<()> {
                let mut w = std::io::BufWriter::new(stdin);
                for l in &lines {
                    w.write_all(l.as_bytes())?;
                    w.write_all(b"\n")?;
                }
                w.write_all(b"{\"type\":\"stop\"}\n")?;
                w.flush()
                // Dropping the writer closes stdin: EOF also means stop.
            })();
            let _ = wtx.send(result);
        });
    let mut answers = BTreeMap::new();
    let mut problems = Vec::new();
    if let Err(e) = writer {
        problems.push(format!("cannot start the writer thread: {e}"));
    }
    let mut stopped = false;
    while answers.len() < ids.len() && problems.is_empty() {
        let outstanding = ids.len() - answers.len();
        match recv_until(&rx, Instant::now() + limits.timeout, limits.stopped) {
            Ok(Read::Line(line)) if line.trim().is_empty() => {}
            Ok(Read::Line(line)) => match parse_answer(&line) {
                Ok((seq, answer)) => match ids.get(&seq) {
                    Some(id) if !answers.contains_key(id) => {
                        answers.insert(id.clone(), answer);
                    }
                    Some(id) => problems.push(format!("adapter answered seq {seq} ({id}) twice")),
                    None => problems.push(format!(
                        "adapter answered unknown seq {seq} (the runner sent seq 1 to {})",
                        ids.len()
                    )),
                },
                Err(e) => problems.push(format!("protocol violation: {e}")),
            },
            Ok(Read::TooLong) => problems.push(format!("protocol violation: {}", too_long())),
            Ok(Read::NotUtf8) => {
                problems.push("protocol violation: a line that is not UTF-8".to_owned());
            }
            Ok(Read::Failed(e)) => {
                problems.push(format!("reading the adapter's stdout failed: {e}"));
            }
            Err(Waited::Timeout) => problems.push(format!(
                "adapter silent for {}s (--adapter-timeout) with {outstanding} answers \
                 outstanding",
                limits.timeout.as_secs_f64()
            )),
            Err(Waited::Closed) => problems.push(format!(
                "adapter closed stdout (exited or crashed) with {outstanding} answers outstanding"
            )),
            Err(Waited::Stopped) => {
                stopped = true;
                break;
            }
        }
    }
    // After `stop` the adapter gets `timeout` to exit on its own (a misbehaving one a second,
    // to collect its exit status); then its whole group is killed, which also unblocks a
    // writer stuck on a full pipe.
    let grace = if problems.is_empty() {
        limits.timeout
    } else {
        limits.timeout.min(Duration::from_secs(1))
    };
    let deadline = Instant::now() + grace;
    let mut exited = group.exited();
    while !exited && !stopped && Instant::now() < deadline {
        if (limits.stopped)() {
            stopped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
        exited = group.exited();
    }
    if !exited && problems.is_empty() && !stopped {
        problems.push(format!(
            "adapter did not exit within {}s (--adapter-timeout) after stop",
            limits.timeout.as_secs_f64()
        ));
    }
    match group.end() {
        Ok(status) if exited && !status.success() => {
            problems.push(format!("adapter exited with {status}"));
        }
        Ok(_) => {}
        Err(e) => problems.push(format!("waiting for the adapter failed: {e}")),
    }
    // Bounded: a process that left the group could still hold the pipes open.
    if let Ok(Err(e)) = wrx.recv_timeout(THREAD_GRACE) {
        if answers.len() < ids.len() && problems.is_empty() {
            problems.push(format!("writing requests failed: {e}"));
        }
    }
    drop(rx);
    if stopped {
        return Err(AdapterError::Stopped {
            cmd: cmd.to_owned(),
        });
    }
    Ok(Session {
        hello,
        answers,
        requested: ids.len(),
        problems,
    })
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
    use super::*;

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
