//! The subprocess producer: `sh -c <CMD>` speaking the producer protocol on JSON lines
//! (`--producer CMD`), one request outstanding at a time, every wait bounded.
//!
//! The program runs as the leader of its own process group; its stderr is captured (the
//! tail is attached to the case it belongs to). A crash, a hang past the timeout, a line
//! over the limit or garbage ends the process (the whole group is killed) and is returned
//! as a [`ProducerFault`]; the engine then calls [`Producer::restart`] and goes on.

use std::process::ChildStdin;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::wire::{stop_line, BulkAnswer, BulkRequest, EnqueueAnswer, EnqueueRequest, Hello};
use super::{Producer, ProducerFault};
use crate::child::{line_reader, recv_until, spawn, Group, Read, Stderr, StderrTail, Waited};

/// How long a request already sent may still take once the run is asked to stop (at most its
/// own timeout): the case in flight finishes and is judged (ADR 0030), and a producer that hangs
/// cannot hold a stopping run for longer than this.
pub const IN_FLIGHT_GRACE: Duration = Duration::from_secs(10);

/// Bounds of a subprocess producer.
#[derive(Clone)]
pub struct ProcessLimits {
    /// Bound on the hello and on the exit after `stop` (`--adapter-timeout`).
    pub timeout: Duration,
    /// Longest accepted line, in bytes.
    pub max_line: usize,
    /// True once the run must stop (checked every few milliseconds while waiting).
    pub stopped: Arc<dyn Fn() -> bool + Send + Sync>,
}

impl std::fmt::Debug for ProcessLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessLimits")
            .field("timeout", &self.timeout)
            .field("max_line", &self.max_line)
            .finish_non_exhaustive()
    }
}

impl Default for ProcessLimits {
    fn default() -> Self {
        Self {
            timeout: crate::adapter::DEFAULT_TIMEOUT,
            max_line: crate::adapter::MAX_LINE_BYTES,
            stopped: Arc::new(|| false),
        }
    }
}

/// One running process.
struct Running {
    group: Group,
    /// Requests go through a writer thread: a producer that stops reading stdin can block a
    /// write, never the runner.
    to_writer: mpsc::Sender<String>,
    lines: mpsc::Receiver<Read>,
    hello: Hello,
}

/// A producer program run as `sh -c <cmd>`.
pub struct SubprocessProducer {
    cmd: String,
    env: Vec<(String, String)>,
    limits: ProcessLimits,
    running: Option<Running>,
    stderr: StderrTail,
    /// What an ended process wrote on stderr and nobody took yet.
    pending_stderr: String,
    /// How many times the program was started.
    starts: u64,
}

impl std::fmt::Debug for SubprocessProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubprocessProducer")
            .field("cmd", &self.cmd)
            .field("starts", &self.starts)
            .finish_non_exhaustive()
    }
}

impl SubprocessProducer {
    /// A producer that runs `cmd` with `env` added to its environment (started on first use).
    #[must_use]
    pub fn new(cmd: &str, env: Vec<(String, String)>, limits: ProcessLimits) -> Self {
        Self {
            cmd: cmd.to_owned(),
            env,
            limits,
            running: None,
            stderr: StderrTail::default(),
            pending_stderr: String::new(),
            starts: 0,
        }
    }

    /// How many times the program was started (1 + restarts).
    #[must_use]
    pub fn starts(&self) -> u64 {
        self.starts
    }

    fn start(&mut self) -> Result<Hello, ProducerFault> {
        self.kill();
        self.starts += 1;
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let start_err = |reason: String| ProducerFault::Start {
            cmd: self.cmd.clone(),
            reason,
        };
        let mut child =
            spawn(&self.cmd, &env, Stderr::Capture).map_err(|e| start_err(e.to_string()))?;
        let pipes = (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let mut group = Group::new(child);
        let (Some(stdin), Some(stdout), Some(stderr)) = pipes else {
            let _ = group.end();
            return Err(start_err("stdio pipes unavailable".to_owned()));
        };
        let started = (|| -> std::io::Result<_> {
            let tail = StderrTail::capture(stderr)?;
            let lines = line_reader(stdout, self.limits.max_line, "awa-producer-out")?;
            let to_writer = writer(stdin)?;
            Ok((tail, lines, to_writer))
        })();
        let (tail, lines, to_writer) = match started {
            Ok(t) => t,
            Err(e) => {
                let _ = group.child().kill();
                let _ = group.end();
                return Err(start_err(format!("cannot start its I/O threads: {e}")));
            }
        };
        self.stderr = tail;
        let deadline = Instant::now() + self.limits.timeout;
        let hello = match recv_until(&lines, deadline, &*self.limits.stopped) {
            Ok(Read::Line(line)) => {
                Hello::parse_line(&line).and_then(|h| h.check_enqueue().map(|()| h))
            }
            Ok(Read::TooLong) => Err(format!("a line longer than {} bytes", self.limits.max_line)),
            Ok(Read::NotUtf8) => Err("the first line is not UTF-8".to_owned()),
            Ok(Read::Failed(e)) => Err(e.to_string()),
            Err(Waited::Timeout) => Err(format!(
                "no line within {}s (--adapter-timeout)",
                self.limits.timeout.as_secs_f64()
            )),
            Err(Waited::Closed) => Err("it closed stdout (exited or crashed) first".to_owned()),
            Err(Waited::Stopped) => {
                let _ = group.end();
                return Err(ProducerFault::Stopped);
            }
        };
        match hello {
            Ok(hello) => {
                self.running = Some(Running {
                    group,
                    to_writer,
                    lines,
                    hello: hello.clone(),
                });
                Ok(hello)
            }
            Err(reason) => {
                let _ = group.end();
                self.stderr.drain(Duration::from_secs(1));
                Err(ProducerFault::Hello(reason))
            }
        }
    }

    /// Kill the running process group, if any, keeping what it wrote on stderr.
    fn kill(&mut self) {
        if let Some(r) = self.running.take() {
            let _ = r.group.end();
            // Its last words (a crash message) matter most: read them before they are lost.
            self.stderr.drain(Duration::from_secs(1));
            self.pending_stderr.push_str(&self.stderr.take());
        }
    }

    /// Send one request (starting the producer if it is not running) and read its answer; a
    /// producer that fails a request in any way is killed.
    fn request<Q: serde::Serialize, A>(
        &mut self,
        request: &Q,
        seq: u64,
        timeout: Duration,
        parse: fn(&str) -> Result<(u64, A), String>,
    ) -> Result<A, ProducerFault> {
        if self.running.is_none() {
            self.start()?;
        }
        let line = serde_json::to_string(request)
            .map_err(|e| ProducerFault::Other(format!("cannot encode the request: {e}")))?;
        let out = self.exchange(line, seq, timeout, parse);
        if out.is_err() {
            // Whatever state it is in, it is not trusted with another request.
            self.kill();
        }
        out
    }

    /// Send one request line and wait for the answer to `seq`, parsed by `parse`.
    fn exchange<A>(
        &mut self,
        line: String,
        seq: u64,
        timeout: Duration,
        parse: fn(&str) -> Result<(u64, A), String>,
    ) -> Result<A, ProducerFault> {
        let stopped = Arc::clone(&self.limits.stopped);
        let max_line = self.limits.max_line;
        let Some(r) = self.running.as_mut() else {
            return Err(ProducerFault::Crashed("not running".to_owned()));
        };
        if r.to_writer.send(line).is_err() {
            return Err(ProducerFault::Crashed(
                "it closed stdin (exited or crashed)".to_owned(),
            ));
        }
        let mut deadline = Instant::now() + timeout;
        // Once the run is asked to stop, the request already sent gets its answer within
        // IN_FLIGHT_GRACE (and its own timeout): the case finishes instead of erroring.
        let mut stopping = false;
        let never = || false;
        loop {
            let stop_check: &dyn Fn() -> bool = if stopping { &never } else { &*stopped };
            match recv_until(&r.lines, deadline, stop_check) {
                Ok(Read::Line(l)) if l.trim().is_empty() => {}
                Ok(Read::Line(l)) => {
                    let (answered, answer) = parse(&l).map_err(ProducerFault::Protocol)?;
                    if answered != seq {
                        return Err(ProducerFault::Protocol(format!(
                            "answered seq {answered}, the outstanding request is seq {seq}"
                        )));
                    }
                    return Ok(answer);
                }
                Ok(Read::TooLong) => {
                    return Err(ProducerFault::Protocol(format!(
                        "a line longer than {max_line} bytes"
                    )))
                }
                Ok(Read::NotUtf8) => {
                    return Err(ProducerFault::Protocol(
                        "a line that is not UTF-8".to_owned(),
                    ))
                }
                Ok(Read::Failed(e)) => {
                    return Err(ProducerFault::Crashed(format!(
                        "reading its stdout failed: {e}"
                    )))
                }
                Err(Waited::Timeout) if stopping => return Err(ProducerFault::Stopped),
                Err(Waited::Timeout) => return Err(ProducerFault::Timeout(timeout)),
                Err(Waited::Closed) => {
                    return Err(ProducerFault::Crashed(
                        "it closed stdout (exited or crashed) before answering".to_owned(),
                    ))
                }
                Err(Waited::Stopped) => {
                    stopping = true;
                    deadline = deadline.min(Instant::now() + IN_FLIGHT_GRACE);
                }
            }
        }
    }
}

/// The writer thread: one line per message, flushed; ends when the sender is dropped
/// (closing stdin) or a write fails.
fn writer(mut stdin: ChildStdin) -> std::io::Result<mpsc::Sender<String>> {
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::Builder::new()
        .name("awa-producer-in".into())
        .spawn(move || {
            while let Ok(line) = rx.recv() {
                if crate::child::write_line(&mut stdin, &line).is_err() {
                    break;
                }
            }
        })?;
    Ok(tx)
}

impl Producer for SubprocessProducer {
    fn hello(&mut self) -> Result<Hello, ProducerFault> {
        match &self.running {
            Some(r) => Ok(r.hello.clone()),
            None => self.start(),
        }
    }

    fn enqueue(
        &mut self,
        request: &EnqueueRequest,
        timeout: Duration,
    ) -> Result<EnqueueAnswer, ProducerFault> {
        self.request(request, request.seq, timeout, EnqueueAnswer::parse_line)
    }

    fn bulk(
        &mut self,
        request: &BulkRequest,
        timeout: Duration,
    ) -> Result<BulkAnswer, ProducerFault> {
        self.request(request, request.seq, timeout, BulkAnswer::parse_line)
    }

    fn restart(&mut self) -> Result<Hello, ProducerFault> {
        self.start()
    }

    fn take_diagnostics(&mut self) -> String {
        let mut text = std::mem::take(&mut self.pending_stderr);
        text.push_str(&self.stderr.take());
        text
    }

    fn stop(&mut self) -> Result<(), ProducerFault> {
        let Some(r) = self.running.take() else {
            return Ok(());
        };
        let _ = r.to_writer.send(stop_line().to_owned());
        // Dropping the sender ends the writer thread, which closes stdin: EOF also means stop.
        drop(r.to_writer);
        let deadline = Instant::now() + self.limits.timeout;
        let mut exited = r.group.exited();
        while !exited && Instant::now() < deadline && !(self.limits.stopped)() {
            std::thread::sleep(Duration::from_millis(10));
            exited = r.group.exited();
        }
        let status = r.group.end();
        self.stderr.drain(Duration::from_secs(1));
        if !exited {
            return Err(ProducerFault::Other(format!(
                "the producer did not exit within {}s (--adapter-timeout) after stop",
                self.limits.timeout.as_secs_f64()
            )));
        }
        match status {
            Ok(s) if !s.success() => Err(ProducerFault::Crashed(format!(
                "the producer exited with {s} after stop"
            ))),
            Ok(_) => Ok(()),
            Err(e) => Err(ProducerFault::Other(format!(
                "waiting for the producer failed: {e}"
            ))),
        }
    }
}

impl Drop for SubprocessProducer {
    fn drop(&mut self) {
        self.kill();
    }
}
