//! Write (or with `--check`, compare) every release's files (`v1/`, `v1.1/`) from the
//! generator; the runner exposes the same as `awa-conformance vectors regenerate [--check]`.

use std::path::PathBuf;
use std::process::ExitCode;

#[expect(clippy::print_stderr, reason = "example binary reports on stderr")]
fn main() -> ExitCode {
    let check = std::env::args().any(|a| a == "--check");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let releases = match awa_conformance_vectors::render_all() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut written = 0;
    for (release, files) in &releases {
        let dir = root.join(release);
        if check {
            if let Err(e) = awa_conformance_vectors::diff_files(files, |n| {
                std::fs::read_to_string(dir.join(n)).ok()
            }) {
                eprintln!("error: {}/{e}", dir.display());
                return ExitCode::FAILURE;
            }
            continue;
        }
        if let Err(e) = std::fs::create_dir_all(&dir) {
            eprintln!("error: cannot create {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
        for (name, text) in files {
            if let Err(e) = std::fs::write(dir.join(name), text) {
                eprintln!("error: cannot write {}: {e}", dir.join(name).display());
                return ExitCode::FAILURE;
            }
            written += 1;
        }
    }
    if !check {
        eprintln!("wrote {written} files under {}", root.display());
    }
    ExitCode::SUCCESS
}
