//! `awa-conformance`: parse the command line, run the action, exit with a documented code.

use std::io::Write;
use std::process::ExitCode;

use awa_conformance_runner::{cli::Cli, dispatch, exit};
use clap::Parser;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            // --help / --version come back as "errors" that exit 0; everything else is usage.
            let _ = e.print();
            return ExitCode::from(if e.exit_code() == 0 {
                exit::SUCCESS
            } else {
                exit::USAGE
            });
        }
    };
    ExitCode::from(dispatch(cli, &argv).unwrap_or_else(|e| {
        let _ = writeln!(std::io::stderr(), "awa-conformance: error: {e}");
        e.exit_code()
    }))
}
