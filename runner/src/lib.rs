//! The `awa-conformance` runner as a library: the binary (`src/main.rs`) is a thin shell.
//!
//! Being a library lets integration tests and other tools drive the suites and reuse the
//! typed errors, the outcome model and the report renderers. Every module is `pub`, so an
//! item other modules use should be `pub` too (it is reachable: `unreachable_pub` stays quiet
//! and intra-doc links from module docs resolve), not `pub(crate)`.

pub mod adapter;
pub mod child;
pub mod cli;
pub mod commands;
pub mod console;
pub mod contract;
pub mod embedded;
pub mod error;
pub mod exit;
pub mod expected;
pub mod fuzz;
pub mod inert;
pub mod interrupt;
pub mod outcome;
pub mod pg;
pub mod producer;
pub mod progress;
pub mod protocol;
pub mod redact;
pub mod report;
pub mod run;
pub mod schema_install;
pub mod shorten;
pub mod suites;
pub mod sync;
pub mod timings;
pub mod vector_set;

use std::io::Write;

use clap::Parser;
use cli::{Action, Cli};

/// The whole command line as the `awa-conformance` binary runs it: parse `argv` (program name
/// first), dispatch, print any error, and return the process exit code. The binary's `main`
/// and the Python wheel's `awa-conformance` console script both call this, so the two
/// commands cannot drift apart.
pub fn main_with_args(argv: &[String]) -> u8 {
    // Before anything can print: every password of the command line and the environment is
    // masked in every message from here on, clap's usage errors (which quote arguments)
    // included (redact).
    let env: Vec<(String, String)> = std::env::vars().collect();
    redact::remember_run_secrets(argv, env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let argv = cli::global_options_after_subcommand(argv);
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            print_clap(&e);
            // --help / --version come back as "errors" that exit 0; everything else is usage.
            return if e.exit_code() == 0 {
                exit::SUCCESS
            } else {
                exit::USAGE
            };
        }
    };
    dispatch(cli, &argv).unwrap_or_else(|e| {
        let text = redact::for_terminal(&e.to_string());
        let _ = writeln!(std::io::stderr(), "awa-conformance: error: {text}");
        e.exit_code()
    })
}

/// Print a clap error or help text as clap would (stdout for help, stderr for errors; coloured
/// on a terminal), through the masking door: clap quotes the offending argument, which may be
/// a DSN given in the wrong place, or hold control characters (clap's own colours are kept).
fn print_clap(e: &clap::Error) {
    use std::io::IsTerminal;
    let rendered = e.render();
    if e.use_stderr() {
        let mut err = std::io::stderr();
        let text = if err.is_terminal() {
            rendered.ansi().to_string()
        } else {
            rendered.to_string()
        };
        let _ = err.write_all(inert::terminal_line(&redact::redact_secrets(&text)).as_bytes());
    } else {
        let mut out = std::io::stdout();
        let text = if out.is_terminal() {
            rendered.ansi().to_string()
        } else {
            rendered.to_string()
        };
        let _ = out.write_all(inert::terminal_line(&redact::redact_secrets(&text)).as_bytes());
    }
}

/// Run a parsed command line; `argv` is recorded (redacted) in reports.
pub fn dispatch(cli: Cli, argv: &[String]) -> Result<u8, error::Error> {
    match cli.into_action() {
        Action::Run(args) => run::run(&args, argv),
        Action::Vectors(cmd) => commands::vectors(&cmd),
        Action::Schema(cmd) => commands::schema(&cmd),
        Action::Version => commands::version(),
        Action::Completions(shell) => commands::completions(shell),
        Action::Man => commands::man(),
        Action::Fuzz(args) => fuzz::run(&args.options()),
        Action::Report(cmd) => commands::report(&cmd),
    }
}
