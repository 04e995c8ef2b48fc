//! The exchange with the adapter process: spawn it (`sh -c <cmd>`), read its `hello`, write
//! one request per vector of every declared family and then `stop` on a thread of its own,
//! read the answers line by line (each wait and each line bounded), and end its process
//! group, whatever happened. What it collects is a [`Session`]; the trials only read it.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use awa_conformance_vectors::{Family, VectorSet};
use serde_json::{json, Value as Json};

use super::{not_declared, raw_input, AdapterError, Answer, Limits, Session};
use crate::child::{line_reader, recv_until, spawn, Group, Read, Stderr, Waited};
use crate::protocol::{
    Hello, Implementation, BULK_CAPABILITY, DSN_ENV, ENQUEUE_CAPABILITY, ERRORS_CAPABILITY,
    NESTED_CAPABILITY, PROTOCOL_FUNCTIONS, PROTOCOL_NEWEST,
};

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

pub(super) struct Request {
    pub(super) seq: u64,
    pub(super) id: String,
    pub(super) line: String,
}

pub(super) fn requests(vectors: &VectorSet, hello: &Hello) -> Vec<Request> {
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

pub(super) fn parse_hello(line: &str) -> Result<Hello, String> {
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

pub(super) fn parse_answer(line: &str) -> Result<(u64, Answer), String> {
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
            "a line longer than {max_line} bytes (docs/adapter-protocol.md: one short JSON object per line)"
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
