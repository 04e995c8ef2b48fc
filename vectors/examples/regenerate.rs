//! Write (or with `--check`, compare) the v1 files from the generator; the runner exposes the
//! same as `awa-conformance vectors regenerate [--check]`.

use std::path::PathBuf;
use std::process::ExitCode;

#[expect(clippy::print_stderr, reason = "example binary reports on stderr")]
fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("v1");
    let files = match awa_conformance_vectors::render_v1() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if check {
        return match awa_conformance_vectors::diff_files(&files, |n| {
            std::fs::read_to_string(dir.join(n)).ok()
        }) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {}/{e}", dir.display());
                ExitCode::FAILURE
            }
        };
    }
    for (name, text) in &files {
        if let Err(e) = std::fs::write(dir.join(name), text) {
            eprintln!("error: cannot write {}: {e}", dir.join(name).display());
            return ExitCode::FAILURE;
        }
    }
    eprintln!("wrote {} files to {}", files.len(), dir.display());
    ExitCode::SUCCESS
}
