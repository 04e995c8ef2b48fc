//! A child process speaking JSON lines: spawning in its own process group, bounded line
//! reads on a thread of their own, bounded waits, stderr capture or forwarding (inert: never
//! the child's raw bytes on the runner's terminal), and killing the whole group.
//!
//! Shared by the function adapter ([`crate::adapter`]) and the subprocess producer
//! ([`crate::producer::process`]), so both treat a crashing, hanging or chatty program alike.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a wait for the child checks whether the run was asked to stop.
pub const POLL: Duration = Duration::from_millis(50);
/// How much of the child's stderr is kept (the tail), in bytes.
pub const STDERR_KEEP: usize = 64 * 1024;

/// What the reader thread reports.
#[derive(Debug)]
pub enum Read {
    /// One line (without its newline).
    Line(String),
    /// A line longer than the limit: the reader stopped reading.
    TooLong,
    /// A line that is not UTF-8.
    NotUtf8,
    /// Reading failed.
    Failed(std::io::Error),
}

/// Outcome of reading one line with a length bound.
#[derive(Debug, PartialEq, Eq)]
pub enum Bounded {
    /// A line was read into the buffer.
    Line,
    /// End of input, nothing read.
    Eof,
    /// The line is longer than the bound; the rest is left unread.
    TooLong,
}

/// Read one `\n`-terminated line into `buf` (cleared first), never holding more than `max`
/// bytes: past that the rest is left unread and [`Bounded::TooLong`] returned.
///
/// # Errors
/// The reader's I/O error.
pub fn read_line_bounded(
    reader: &mut impl BufRead,
    max: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<Bounded> {
    buf.clear();
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            // A last line without a newline still counts.
            return Ok(if buf.is_empty() {
                Bounded::Eof
            } else {
                Bounded::Line
            });
        }
        let (chunk, complete) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (available.get(..i).unwrap_or(available), true),
            None => (available, false),
        };
        if buf.len() + chunk.len() > max {
            return Ok(Bounded::TooLong);
        }
        buf.extend_from_slice(chunk);
        let used = chunk.len() + usize::from(complete);
        reader.consume(used);
        if complete {
            return Ok(Bounded::Line);
        }
    }
}

/// Why a wait ended without a value.
#[derive(Debug, PartialEq, Eq)]
pub enum Waited {
    /// The deadline passed.
    Timeout,
    /// The sender is gone (the child closed its stdout).
    Closed,
    /// The run was asked to stop.
    Stopped,
}

/// Receive from `rx` until `deadline`, giving up early when the run is asked to stop.
///
/// # Errors
/// [`Waited`] says why nothing was received.
pub fn recv_until<T>(
    rx: &mpsc::Receiver<T>,
    deadline: Instant,
    stopped: &dyn Fn() -> bool,
) -> Result<T, Waited> {
    loop {
        if stopped() {
            return Err(Waited::Stopped);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Waited::Timeout);
        }
        match rx.recv_timeout(left.min(POLL)) {
            Ok(v) => return Ok(v),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Waited::Closed),
        }
    }
}

/// Where the child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    /// To the runner's stderr line by line, masked and with control and bidi characters shown
    /// ([`crate::redact::for_terminal`]): the adapter's diagnostics go to the user, inert
    /// ([`forward`]).
    Forward,
    /// Into a buffer (its tail is kept) that the report shows.
    Capture,
}

/// The longest line [`forward`] holds before it writes it out as it is so far.
const FORWARD_LINE: usize = 64 * 1024;

/// Copy a child's `stderr` to the runner's, one line at a time through
/// [`crate::redact::for_terminal`], on a thread of its own that ends at EOF (when the child's
/// whole process group is gone). A line longer than [`FORWARD_LINE`] is written in pieces.
///
/// # Errors
/// The thread could not be started.
pub fn forward(stderr: impl std::io::Read + Send + 'static) -> std::io::Result<()> {
    use std::io::Write;
    std::thread::Builder::new()
        .name("awa-child-stderr".into())
        .spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            while let Ok(Bounded::Line | Bounded::TooLong) =
                read_line_bounded(&mut reader, FORWARD_LINE, &mut line)
            {
                let shown = crate::redact::for_terminal(&String::from_utf8_lossy(&line));
                // The terminal is the user's: a failed write loses a diagnostic, nothing else.
                let _ = writeln!(std::io::stderr().lock(), "{shown}");
            }
        })
        .map(drop)
}

/// Start `sh -c <cmd>` as the leader of a new process group, so that the child and
/// everything it starts (`sh -c` may fork rather than exec) can be killed together.
///
/// # Errors
/// The OS error of the spawn.
pub fn spawn(cmd: &str, env: &[(&str, &str)], stderr: Stderr) -> std::io::Result<Child> {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match stderr {
            // Never inherited: a child's bytes would reach the terminal raw.
            Stderr::Forward | Stderr::Capture => Stdio::piped(),
        })
        // Its own group: also keeps the terminal's Ctrl-C from reaching it before the runner
        // has decided what to do (the runner kills it itself).
        .process_group(0);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn()?;
    if stderr == Stderr::Forward {
        if let Some(pipe) = child.stderr.take() {
            if let Err(e) = forward(pipe) {
                // No thread, no reader: a child writing much to a pipe nobody drains would
                // block. Not started at all is the clean failure.
                let _ = Group::new(child).end();
                return Err(e);
            }
        }
    }
    Ok(child)
}

/// The child's process group, killed as a whole when it ends.
#[derive(Debug)]
pub struct Group {
    child: Child,
}

impl Group {
    /// Take ownership of a child spawned by [`spawn`].
    #[must_use]
    pub fn new(child: Child) -> Self {
        Self { child }
    }

    /// The child (to take its pipes).
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Whether the leader has exited (without reaping it, so its pid and the group id
    /// cannot be reused before [`Group::end`] kills the group).
    #[must_use]
    pub fn exited(&self) -> bool {
        let pid = rustix::process::Pid::from_child(&self.child);
        matches!(
            rustix::process::waitid(
                rustix::process::WaitId::Pid(pid),
                rustix::process::WaitIdOptions::EXITED
                    | rustix::process::WaitIdOptions::NOHANG
                    | rustix::process::WaitIdOptions::NOWAIT,
            ),
            Ok(Some(_)) | Err(_)
        )
    }

    /// Kill every process left in the group, then reap the leader; returns its status.
    ///
    /// # Errors
    /// Waiting for the leader failed.
    pub fn end(mut self) -> std::io::Result<std::process::ExitStatus> {
        let pid = rustix::process::Pid::from_child(&self.child);
        // ESRCH (nobody left) is the normal case after a clean exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        // The leader too, directly: should the group be gone, the wait below must not block.
        let _ = self.child.kill();
        self.child.wait()
    }
}

/// Start a thread that reads `stdout` line by line (each at most `max_line` bytes) and
/// sends what it reads; it ends after EOF or the first non-line.
///
/// # Errors
/// The thread could not be started.
pub fn line_reader(
    stdout: impl std::io::Read + Send + 'static,
    max_line: usize,
    name: &str,
) -> std::io::Result<mpsc::Receiver<Read>> {
    let (tx, rx) = mpsc::channel::<Read>();
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let mut stdout = BufReader::new(stdout);
            let mut buf = Vec::new();
            loop {
                let msg = match read_line_bounded(&mut stdout, max_line, &mut buf) {
                    Ok(Bounded::Eof) => break,
                    Ok(Bounded::Line) => match String::from_utf8(std::mem::take(&mut buf)) {
                        Ok(line) => Read::Line(line),
                        Err(_) => Read::NotUtf8,
                    },
                    Ok(Bounded::TooLong) => Read::TooLong,
                    Err(e) => Read::Failed(e),
                };
                let last = !matches!(msg, Read::Line(_));
                if tx.send(msg).is_err() || last {
                    break;
                }
            }
        })?;
    Ok(rx)
}

/// The captured tail of a child's stderr, filled by a thread of its own.
#[derive(Debug, Default)]
pub struct StderrTail {
    buf: Arc<Mutex<Vec<u8>>>,
    /// Disconnected once the capturing thread has read everything (EOF).
    done: Option<mpsc::Receiver<()>>,
}

impl StderrTail {
    /// Start capturing `stderr` (keeps the last [`STDERR_KEEP`] bytes).
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn capture(stderr: impl std::io::Read + Send + 'static) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<()>();
        let tail = Self {
            buf: Arc::default(),
            done: Some(rx),
        };
        let buf = Arc::clone(&tail.buf);
        std::thread::Builder::new()
            .name("awa-child-stderr".into())
            .spawn(move || {
                // Dropped when the thread ends: the receiver then sees a disconnect.
                let _done = tx;
                let mut stderr = stderr;
                let mut chunk = [0u8; 8192];
                while let Ok(n) = stderr.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut b) = buf.lock() {
                        b.extend_from_slice(chunk.get(..n).unwrap_or(&[]));
                        let excess = b.len().saturating_sub(STDERR_KEEP);
                        if excess > 0 {
                            // Cut after a whitespace: a tail starting inside a password
                            // would show its end, which no mask can recognise.
                            let cut = b
                                .get(excess..)
                                .and_then(|kept| kept.iter().position(u8::is_ascii_whitespace))
                                .map_or(b.len(), |pos| excess + pos + 1);
                            b.drain(..cut);
                        }
                    }
                }
            })?;
        Ok(tail)
    }

    /// Wait (at most `limit`) until everything the child wrote is captured: its stderr is
    /// closed once the whole process group is gone.
    pub fn drain(&self, limit: Duration) {
        if let Some(done) = &self.done {
            let _ = done.recv_timeout(limit);
        }
    }

    /// Take what was captured since the last call (lossy UTF-8), masked: a child that
    /// prints its DSN or `PGPASSWORD` must not put the password into a report
    /// ([`crate::redact`]).
    #[must_use]
    pub fn take(&self) -> String {
        let text = self
            .buf
            .lock()
            .map(|mut b| String::from_utf8_lossy(&std::mem::take(&mut *b)).into_owned())
            .unwrap_or_default();
        crate::redact::redact_secrets(&text)
    }
}

/// Write one line (with `\n`) to the child's stdin and flush.
///
/// # Errors
/// The write failed (the child closed stdin or exited).
pub fn write_line(stdin: &mut ChildStdin, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    stdin.write_all(line.as_bytes())?;
    stdin.write_all(b"\n")?;
    stdin.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded() {
        let mut input = std::io::Cursor::new(b"short\nthis one is too long\nlast".to_vec());
        let mut reader = BufReader::with_capacity(4, &mut input);
        let mut buf = Vec::new();
        assert_eq!(
            read_line_bounded(&mut reader, 8, &mut buf).unwrap(),
            Bounded::Line
        );
        assert_eq!(buf, b"short");
        assert_eq!(
            read_line_bounded(&mut reader, 8, &mut buf).unwrap(),
            Bounded::TooLong
        );
        assert!(buf.len() <= 8, "held {} bytes", buf.len());
        let mut reader = BufReader::new(std::io::Cursor::new(b"a\nlast".to_vec()));
        assert_eq!(
            read_line_bounded(&mut reader, 8, &mut buf).unwrap(),
            Bounded::Line
        );
        assert_eq!(
            read_line_bounded(&mut reader, 8, &mut buf).unwrap(),
            Bounded::Line
        );
        assert_eq!(buf, b"last");
        assert_eq!(
            read_line_bounded(&mut reader, 8, &mut buf).unwrap(),
            Bounded::Eof
        );
    }
}
