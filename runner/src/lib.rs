//! The `awa-conformance` runner as a library: the binary (`src/main.rs`) is a thin shell.
//!
//! Being a library lets integration tests and other tools drive the suites and reuse the
//! typed errors, the outcome model and the report renderers. Every module is `pub`, so an
//! item other modules use should be `pub` too (it is reachable: `unreachable_pub` stays quiet
//! and intra-doc links from module docs resolve), not `pub(crate)`.

pub mod adapter;
pub mod cli;
pub mod commands;
pub mod console;
pub mod embedded;
pub mod error;
pub mod exit;
pub mod expected;
pub mod interrupt;
pub mod outcome;
pub mod pg;
pub mod progress;
pub mod report;
pub mod schema_install;
pub mod suites;

use cli::{Action, Cli};

/// Run a parsed command line; `argv` is recorded (redacted) in reports.
pub fn dispatch(cli: Cli, argv: &[String]) -> Result<u8, error::Error> {
    match cli.into_action() {
        Action::Run(args) => suites::run(&args, argv),
        Action::Vectors(cmd) => commands::vectors(&cmd),
        Action::Schema(cmd) => commands::schema(&cmd),
        Action::Version => commands::version(),
    }
}
