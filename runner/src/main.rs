//! `awa-conformance`: parse the command line, run the action, exit with a documented code.

use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    ExitCode::from(awa_conformance_runner::main_with_args(&argv))
}
