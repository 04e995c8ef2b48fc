//! libtest's output on its way to stdout: expected failures shown as `xfail`, and a closed
//! stdout turned into a clean stop instead of a panic.
//!
//! libtest-mimic writes its lines itself and unwraps every write, so a closed stdout
//! (`awa-conformance | head -1`) would panic it (exit 101), and it can only say `ok` for a
//! trial that did not fail. So it writes into a pipe (its `--logfile` option pointed at the
//! pipe's write end) and this module copies the pipe to the real destination line by line:
//! a `test <name> ... ok` line of a case recorded as an expected failure becomes
//! `... xfail`; everything else (the failure texts, the `--format json` event stream) passes
//! unchanged but for passwords, masked ([`crate::redact`]), and control and bidi characters,
//! shown as `\u{XXXX}` (libtest's own colours are kept: [`crate::inert::terminal_line`]).
//! When the destination
//! cannot be written any more the copy keeps draining the pipe, so libtest never blocks or
//! panics, and the run is told once to stop.
//!
//! Once [`Console::finish`] returned (or the console was dropped) nothing more reaches the
//! destination, even from a trial that is still printing: what the run prints next on stdout
//! (the `--markdown -` summary) then comes out whole, after the trial lines.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use crate::error::Error;
use crate::outcome::RunContext;

/// Where the copy goes.
#[derive(Debug)]
pub enum Sink {
    /// The process's stdout.
    Stdout,
    /// A file (the user's own `--logfile`).
    File(PathBuf),
}

/// A running copy from libtest's pipe to the sink.
#[derive(Debug)]
pub struct Console {
    logfile: String,
    write_end: Option<OwnedFd>,
    done: mpsc::Receiver<()>,
    gate: Arc<Gate>,
}

/// Whether the copy may still write, held while it writes a line: closing it waits for the
/// line in flight, and no line is written after it.
#[derive(Debug)]
struct Gate(Mutex<bool>);

impl Gate {
    fn open() -> Self {
        Self(Mutex::new(true))
    }

    fn close(&self) {
        *crate::sync::lock(&self.0) = false;
    }
}

/// Write `text` to stdout for a one-shot command (a list, a Markdown report, a subcommand's
/// answer). Not masked: it is data (SQL, vectors) or built from masked results. A closed pipe (`| head`) is not an error worth a non-zero exit: the reader has
/// what it wanted. `action` names the write in the error (`cannot write the list to`).
///
/// # Errors
/// [`Error::Io`] for any other write error.
pub fn print(text: &str, action: &'static str) -> Result<(), Error> {
    print_io(text).map_err(|source| Error::Io {
        action,
        path: PathBuf::from("stdout"),
        source,
    })
}

/// [`print`] with the OS error as it is (a closed pipe still counts as written).
///
/// # Errors
/// Any write error but a closed pipe.
pub fn print_io(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

impl Console {
    /// Start copying. `on_closed` is called once if the sink stops accepting output.
    ///
    /// # Errors
    /// [`Error::Harness`] when the pipe or the copying thread cannot be set up;
    /// [`Error::Io`] when the user's logfile cannot be created.
    pub fn start(
        sink: Sink,
        ctx: Arc<RunContext>,
        on_closed: impl Fn() + Send + 'static,
    ) -> Result<Self, Error> {
        let harness = |detail: String| Error::Harness { detail };
        let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| harness(format!("cannot create the output pipe: {e}")))?;
        let mut out: Box<dyn Write + Send> = match sink {
            Sink::Stdout => Box::new(std::io::stdout()),
            Sink::File(path) => Box::new(File::create(&path).map_err(|source| Error::Io {
                action: "cannot write the log file",
                path,
                source,
            })?),
        };
        let (done_tx, done) = mpsc::channel();
        let reader = BufReader::new(File::from(read_end));
        let gate = Arc::new(Gate::open());
        let copy_gate = Arc::clone(&gate);
        std::thread::Builder::new()
            .name("awa-console".into())
            .spawn(move || {
                copy(reader, &mut out, &ctx, &on_closed, &copy_gate);
                let _ = done_tx.send(());
            })
            .map_err(|e| harness(format!("cannot start the output thread: {e}")))?;
        Ok(Self {
            // libtest opens this path itself (File::create); on Linux it names the pipe.
            logfile: format!("/dev/fd/{}", write_end.as_raw_fd()),
            write_end: Some(write_end),
            done,
            gate,
        })
    }

    /// The path to give libtest-mimic as its `logfile`.
    #[must_use]
    pub fn logfile(&self) -> &str {
        &self.logfile
    }

    /// After libtest returned: close the pipe and wait (at most `limit`) until everything it
    /// wrote reached the sink; then stop copying. Returns whether everything was copied.
    pub fn finish(mut self, limit: Duration) -> bool {
        drop(self.write_end.take());
        let drained = self.done.recv_timeout(limit).is_ok();
        self.gate.close();
        drained
    }
}

impl Drop for Console {
    /// A console given up on (the trials were abandoned) writes nothing more.
    fn drop(&mut self) {
        self.gate.close();
    }
}

/// Copy lines until the pipe closes; after a failed write, drain without writing.
fn copy(
    mut reader: impl BufRead,
    out: &mut dyn Write,
    ctx: &RunContext,
    on_closed: &dyn Fn(),
    gate: &Gate,
) {
    let mut open = true;
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if !open {
            continue;
        }
        let text = rewrite(&line, |name| ctx.is_expected_failure(name));
        let may_write = crate::sync::lock(&gate.0);
        if !*may_write {
            // The run has moved on (finish or drop): drain only.
            open = false;
            continue;
        }
        // The failure texts may quote what a producer or the server said: masked here, on
        // the way out, so nothing libtest prints can show a password, move the cursor or
        // reorder a line.
        let masked = mask(text.as_deref().unwrap_or(&line));
        let written = out.write_all(&masked).and_then(|()| out.flush());
        if written.is_err() {
            open = false;
            on_closed();
        }
    }
}

/// `line` through the masking door ([`crate::redact`]) and the terminal's
/// ([`crate::inert::terminal_line`]); a line that is not UTF-8 is masked as lossy UTF-8 (a
/// replacement character beats a leaked password).
fn mask(line: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(line);
    crate::inert::terminal_line(&crate::redact::redact_secrets(&text))
        .into_owned()
        .into_bytes()
}

/// The line with `ok` replaced by `xfail` when it is libtest's result line of a case that
/// `is_xfail`; `None` when the line stays as it is.
fn rewrite(line: &[u8], is_xfail: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text.strip_prefix("test ")?;
    let (name, outcome) = rest.split_once(" ... ")?;
    let (outcome, newline) = match outcome.strip_suffix('\n') {
        Some(o) => (o, "\n"),
        None => (outcome, ""),
    };
    if strip_ansi(outcome) != "ok" || !is_xfail(name.trim_end()) {
        return None;
    }
    // Keep libtest's colouring choice: coloured output gets a coloured xfail.
    let xfail = if outcome.contains('\x1b') {
        "\x1b[33mxfail\x1b[0m"
    } else {
        "xfail"
    };
    Some(format!("test {name} ... {xfail}{newline}").into_bytes())
}

/// `text` without ANSI colour sequences (`ESC [ ... m`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(line: &str) -> Option<String> {
        rewrite(line.as_bytes(), |n| n == "f::x").map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn only_ok_lines_of_expected_failures_change() {
        assert_eq!(
            rw("test f::x       ... ok\n").as_deref(),
            Some("test f::x       ... xfail\n")
        );
        assert_eq!(
            rw("test f::x ... \x1b[32mok\x1b[0m\n").as_deref(),
            Some("test f::x ... \x1b[33mxfail\x1b[0m\n")
        );
        assert_eq!(rw("test f::y ... ok\n"), None);
        assert_eq!(rw("test f::x ... FAILED\n"), None);
        assert_eq!(rw("test result: ok. 1 passed\n"), None);
        assert_eq!(
            rw("{\"type\":\"test\",\"name\":\"f::x\",\"event\":\"ok\"}\n"),
            None
        );
    }

    #[test]
    fn foreign_text_on_its_way_out_is_inert_and_libtests_colours_stay() {
        let line = "test x ... \x1b[31mFAILED\x1b[0m \u{202E}evil\r\x1b[2J\x07\n";
        let shown = String::from_utf8(mask(line.as_bytes())).unwrap();
        assert_eq!(
            shown,
            "test x ... \x1b[31mFAILED\x1b[0m \\u{202E}evil\\u{000D}\\u{001B}[2J\\u{0007}\n"
        );
    }

    /// A sink that fails after the first write, like a pipe whose reader went away.
    struct ClosesAfterOne(usize);
    impl Write for ClosesAfterOne {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += 1;
            if self.0 > 1 {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_sink_is_reported_once_and_the_pipe_is_still_drained() {
        let ctx = RunContext::new(crate::expected::ExpectedFailures::default());
        let input = "a\nb\nc\nd\n".as_bytes();
        let mut reader = BufReader::new(input);
        let calls = std::sync::atomic::AtomicUsize::new(0);
        copy(
            &mut reader,
            &mut ClosesAfterOne(0),
            &ctx,
            &|| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            },
            &Gate::open(),
        );
        assert_eq!(calls.into_inner(), 1);
        assert!(reader.fill_buf().unwrap().is_empty(), "not drained");
    }

    /// Serves one line per read and closes the gate before serving the second, as
    /// [`Console::finish`] does while a trial that outlived the run is still printing.
    struct FinishedAfterOne<'a> {
        lines: Vec<&'static [u8]>,
        gate: &'a Gate,
    }
    impl std::io::Read for FinishedAfterOne<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.lines.len() == 1 {
                self.gate.close();
            }
            let Some(line) = self.lines.pop() else {
                return Ok(0);
            };
            buf[..line.len()].copy_from_slice(line);
            Ok(line.len())
        }
    }

    #[test]
    fn nothing_reaches_the_sink_after_the_console_finished() {
        let ctx = RunContext::new(crate::expected::ExpectedFailures::default());
        let gate = Gate::open();
        let lines: Vec<&'static [u8]> = vec![b"test late ... ok\n", b"test a ... ok\n"];
        let mut reader = BufReader::new(FinishedAfterOne { lines, gate: &gate });
        let mut out = Vec::new();
        copy(&mut reader, &mut out, &ctx, &|| {}, &gate);
        assert_eq!(String::from_utf8(out).unwrap(), "test a ... ok\n");
        assert!(reader.fill_buf().unwrap().is_empty(), "not drained");
    }
}
