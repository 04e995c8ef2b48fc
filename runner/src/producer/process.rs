//! The subprocess producer: `sh -c <CMD>` speaking the producer protocol on JSON lines
//! (`--producer CMD`), every wait bounded. A producer that declares `max_in_flight` above 1
//! is sent requests before it answered earlier ones: a router thread hands each answer line to
//! the request of its `seq` (ADR 0057); otherwise one request is outstanding at a time.
//!
//! The program runs as the leader of its own process group; its stderr is captured (the
//! tail is attached to the case it belongs to). A crash, a hang past the timeout, a line
//! over the limit or garbage ends the process (the whole group is killed) and is returned
//! as a [`ProducerFault`]; the engine then calls [`Producer::restart`] and goes on.

use std::collections::BTreeMap;
use std::process::ChildStdin;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Producer, ProducerFault};
use crate::child::{line_reader, recv_until, spawn, Group, Read, Stderr, StderrTail, Waited};
use crate::protocol::{stop_line, BulkAnswer, BulkRequest, EnqueueAnswer, EnqueueRequest, Hello};

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
    /// The answer lines, read here one request at a time; `None` once the router reads them.
    lines: Option<mpsc::Receiver<Read>>,
    /// With several requests in flight: who waits for which `seq`.
    router: Option<Arc<Mutex<Routes>>>,
    hello: Hello,
}

/// The requests in flight of a routed producer, by `seq`, and the fault that ended it.
#[derive(Default)]
struct Routes {
    waiting: BTreeMap<u64, mpsc::Sender<Result<String, ProducerFault>>>,
    dead: Option<ProducerFault>,
}

impl Routes {
    /// Every request in flight fails with `fault`, and so does every later one.
    fn fail_all(&mut self, fault: &ProducerFault) {
        for (_, tx) in std::mem::take(&mut self.waiting) {
            let _ = tx.send(Err(fault.clone()));
        }
        self.dead.get_or_insert_with(|| fault.clone());
    }
}

fn routes(m: &Mutex<Routes>) -> std::sync::MutexGuard<'_, Routes> {
    crate::sync::lock(m)
}

/// A request sent and not answered yet: waiting for it needs no access to the producer, so
/// that other requests can be sent meanwhile.
pub type Pending<A> = Box<dyn FnOnce() -> Result<A, ProducerFault> + Send>;

/// The router thread: each answer line goes to the request of its `seq`. A line answering no
/// request in flight, an unreadable line or a closed stdout fails every request in flight
/// (the engine then restarts the producer).
fn route(lines: mpsc::Receiver<Read>, state: Arc<Mutex<Routes>>, max_line: usize) {
    #[derive(serde::Deserialize)]
    struct Seq {
        seq: Option<u64>,
    }
    let fault = loop {
        match lines.recv() {
            Ok(Read::Line(l)) if l.trim().is_empty() => {}
            Ok(Read::Line(l)) => {
                let seq = serde_json::from_str::<Seq>(&l).ok().and_then(|s| s.seq);
                let mut st = routes(&state);
                match seq.and_then(|s| st.waiting.remove(&s)) {
                    Some(tx) => {
                        let _ = tx.send(Ok(l));
                    }
                    None => {
                        let outstanding: Vec<u64> = st.waiting.keys().copied().collect();
                        let shown: String = l.chars().take(200).collect();
                        st.fail_all(&ProducerFault::Protocol(format!(
                            "a line answering no request in flight (seq {}; in flight: \
                             {outstanding:?}): {shown}",
                            seq.map_or_else(|| "missing".to_owned(), |s| s.to_string())
                        )));
                        return;
                    }
                }
            }
            Ok(Read::TooLong) => {
                break ProducerFault::Protocol(format!("a line longer than {max_line} bytes"))
            }
            Ok(Read::NotUtf8) => {
                break ProducerFault::Protocol("a line that is not UTF-8".to_owned())
            }
            Ok(Read::Failed(e)) => {
                break ProducerFault::Crashed(format!("reading its stdout failed: {e}"))
            }
            Err(_) => {
                break ProducerFault::Crashed(
                    "it closed stdout (exited or crashed) before answering".to_owned(),
                )
            }
        }
    };
    routes(&state).fail_all(&fault);
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
    /// The fault a restart is for, told to the requests it cuts off.
    restart_cause: Option<String>,
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
            restart_cause: None,
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
                let (lines, router) = if hello.in_flight() > 1 {
                    let state = Arc::new(Mutex::new(Routes::default()));
                    let routed = Arc::clone(&state);
                    let max_line = self.limits.max_line;
                    let spawned = std::thread::Builder::new()
                        .name("awa-producer-route".into())
                        .spawn(move || route(lines, routed, max_line));
                    if let Err(e) = spawned {
                        let _ = group.end();
                        return Err(start_err(format!("cannot start its router thread: {e}")));
                    }
                    (None, Some(state))
                } else {
                    (Some(lines), None)
                };
                self.running = Some(Running {
                    group,
                    to_writer,
                    lines,
                    router,
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
            if let Some(router) = &r.router {
                let why = self
                    .restart_cause
                    .take()
                    .unwrap_or_else(|| "its fault".to_owned());
                routes(router).fail_all(&ProducerFault::CutOff(why));
            }
            let _ = r.group.end();
            // Its last words (a crash message) matter most: read them before they are lost.
            self.stderr.drain(Duration::from_secs(1));
            self.pending_stderr.push_str(&self.stderr.take());
        }
    }

    /// Send one request (starting the producer if it is not running) and read its answer; a
    /// producer that fails a request in any way is killed.
    fn request<Q: serde::Serialize, A: 'static>(
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
        let out = match self.running.as_ref().and_then(|r| r.router.clone()) {
            Some(router) => self
                .submit(&router, line, seq, timeout, parse)
                .and_then(|wait| wait()),
            None => self.exchange(line, seq, timeout, parse),
        };
        if out.is_err() {
            // Whatever state it is in, it is not trusted with another request.
            self.kill();
        }
        out
    }

    /// Send one request line to a routed producer; the answer to `seq` is waited for by the
    /// returned [`Pending`] (bounded by `timeout`, and by [`IN_FLIGHT_GRACE`] once the run is
    /// asked to stop), which needs no access to the producer.
    fn submit<A: 'static>(
        &self,
        router: &Arc<Mutex<Routes>>,
        line: String,
        seq: u64,
        timeout: Duration,
        parse: fn(&str) -> Result<(u64, A), String>,
    ) -> Result<Pending<A>, ProducerFault> {
        let (tx, rx) = mpsc::channel();
        {
            let mut st = routes(router);
            if let Some(fault) = &st.dead {
                return Err(fault.clone());
            }
            st.waiting.insert(seq, tx);
        }
        let sent = self
            .running
            .as_ref()
            .is_some_and(|r| r.to_writer.send(line).is_ok());
        if !sent {
            routes(router).waiting.remove(&seq);
            return Err(ProducerFault::Crashed(
                "it closed stdin (exited or crashed)".to_owned(),
            ));
        }
        let stopped = Arc::clone(&self.limits.stopped);
        let router = Arc::clone(router);
        Ok(Box::new(move || {
            let mut deadline = Instant::now() + timeout;
            let mut stopping = false;
            let never = || false;
            let out = loop {
                let stop_check: &dyn Fn() -> bool = if stopping { &never } else { &*stopped };
                match recv_until(&rx, deadline, stop_check) {
                    Ok(Ok(line)) => {
                        break parse(&line)
                            .map(|(_, answer)| answer)
                            .map_err(ProducerFault::Protocol)
                    }
                    Ok(Err(fault)) => break Err(fault),
                    Err(Waited::Timeout) if stopping => break Err(ProducerFault::Stopped),
                    Err(Waited::Timeout) => break Err(ProducerFault::Timeout(timeout)),
                    Err(Waited::Closed) => {
                        break Err(ProducerFault::Crashed(
                            "its answers stopped being read".to_owned(),
                        ))
                    }
                    Err(Waited::Stopped) => {
                        stopping = true;
                        deadline = deadline.min(Instant::now() + IN_FLIGHT_GRACE);
                    }
                }
            };
            if out.is_err() {
                routes(&router).waiting.remove(&seq);
            }
            out
        }))
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
            let Some(lines) = r.lines.as_ref() else {
                return Err(ProducerFault::Crashed("its answers are routed".to_owned()));
            };
            match recv_until(lines, deadline, stop_check) {
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

    fn send(
        &mut self,
        request: &EnqueueRequest,
        timeout: Duration,
    ) -> Result<super::Pending, ProducerFault> {
        if self.running.is_none() {
            self.start()?;
        }
        let Some(router) = self.running.as_ref().and_then(|r| r.router.clone()) else {
            let answer = self.enqueue(request, timeout);
            return Ok(Box::new(move || answer));
        };
        let line = serde_json::to_string(request)
            .map_err(|e| ProducerFault::Other(format!("cannot encode the request: {e}")))?;
        self.submit(
            &router,
            line,
            request.seq,
            timeout,
            EnqueueAnswer::parse_line,
        )
    }

    fn bulk(
        &mut self,
        request: &BulkRequest,
        timeout: Duration,
    ) -> Result<BulkAnswer, ProducerFault> {
        self.request(request, request.seq, timeout, BulkAnswer::parse_line)
    }

    fn restart(&mut self, cause: &ProducerFault) -> Result<Hello, ProducerFault> {
        self.restart_cause = Some(cause.to_string());
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
