//! The `run` action, in four steps: plan, open the database, execute, report.
//!
//! [`crate::suites`] only builds trials; this module decides which run, where, and what the
//! run concluded. Each step's failure has its own exit code (see [`crate::exit`]):
//! 1. **plan** ([`plan`]): check the options (3), read the expected-failures file (3), load
//!    and verify the vector set (2); build the offline trials and list the DB and adapter
//!    trials without a database (so that names are known and no cluster is started when the
//!    filter selects no SQL case); check the expected-failure IDs against the full, unfiltered
//!    trial list (3), and that the filter selects at least one case (3). `--list` ends here;
//! 2. **open the database** ([`database`]): from here on SIGINT/SIGTERM stop the run cleanly
//!    ([`crate::interrupt`]); connect (or start a throwaway cluster and install the reference
//!    schema) and preflight the contract schema and the environment (4 / 5), only when a SQL
//!    case is selected;
//! 3. **execute** ([`execute`]): talk to the adapter (6), then run with libtest-mimic on a
//!    thread of its own, its output passed through [`crate::console`] (`xfail`, closed
//!    stdout), each case bounded by `--case-timeout`;
//! 4. **report** ([`report`]): clean up the database, decide the verdict from the results and
//!    the exit code from the verdict, then write the reports (also after exits 4, 5, 6 and a
//!    stop) and the baseline. A run that executed no case is not a pass (3, or 4 without a
//!    database).

mod database;
mod execute;
mod plan;
mod report;

pub use report::library_report;

use crate::cli::RunArgs;
use crate::error::Error;
use crate::exit;

/// Run the suites; returns the exit code.
pub fn run(args: &RunArgs, argv: &[String]) -> Result<u8, Error> {
    let (plan, offline_trials) = match plan::plan(args)? {
        plan::Planned::Listed => return Ok(exit::SUCCESS),
        plan::Planned::Run(plan, offline_trials) => (plan, offline_trials),
    };
    // From here on the run may create things in the database and start processes: a signal
    // must stop it cleanly instead of killing it.
    let events = execute::Events::watch_signals(&plan.ctx);
    let mut database = database::Database::none(database::no_database("no SQL case selected"));
    // The database is kept here as soon as it exists, so it is cleaned up whatever happens.
    let outcome = match database::open(&plan, args) {
        Ok(opened) => {
            database = opened;
            execute::execute(&plan, args, offline_trials, &database, &events)
        }
        Err(e) => Err(e),
    };
    // Whatever stopped the run, and whatever happens during cleanup: decided now.
    let stopped = plan.ctx.stop_reason();
    database.close();
    crate::interrupt::clear();
    report::finish(&plan, args, argv, outcome, stopped)
}

/// One `awa-conformance: warning: …` line on stderr (stdout may carry libtest's JSON),
/// masked and with control and bidi characters shown ([`crate::redact::for_terminal`]).
fn warn(text: &str) {
    use std::io::Write;
    let text = crate::redact::for_terminal(text);
    let _ = writeln!(std::io::stderr(), "awa-conformance: warning: {text}");
}

/// A block of information on stderr (stdout may carry libtest's JSON), with control and bidi
/// characters shown.
fn note(text: &str) {
    use std::io::Write;
    let _ = write!(std::io::stderr(), "{}", crate::inert::terminal(text));
}

/// One `awa-conformance: error: …` line on stderr, masked and with control and bidi
/// characters shown.
fn report_error(text: &str) {
    use std::io::Write;
    let text = crate::redact::for_terminal(text);
    let _ = writeln!(std::io::stderr(), "awa-conformance: error: {text}");
}
