//! The `vectors`, `schema`, `completions` and `man` subcommands (the `run` action lives in
//! [`crate::suites`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use awa_conformance_vectors::{check_vector, diff_files, render_v1, Family, V1_FILES};

use crate::cli::{ListFormat, SchemaCommand, VectorsCommand};
use crate::error::Error;
use crate::exit;
use crate::pg::Dsn;
use crate::suites::load_vectors;

/// Where `vectors regenerate` writes when no `--dir` is given (run from the repository root).
const DEFAULT_VECTORS_DIR: &str = "vectors/v1";

/// Write `text` to stdout (a closed pipe is not an error worth a non-zero exit).
fn out(text: &str) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Io {
            action: "cannot write to",
            path: PathBuf::from("stdout"),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Run a `vectors` subcommand; returns the exit code.
pub fn vectors(cmd: &VectorsCommand) -> Result<u8, Error> {
    match cmd {
        VectorsCommand::Verify { dir } => verify(dir.as_deref()),
        VectorsCommand::Regenerate { check, dir } => regenerate(*check, dir.as_deref()),
        VectorsCommand::List { family, format } => list(family.as_deref(), *format),
    }
}

/// Schema, IDs, manifest, and that the core reproduces every vector.
fn verify(dir: Option<&Path>) -> Result<u8, Error> {
    let (set, source) = load_vectors(dir)?;
    for (family, vector) in set.iter() {
        check_vector(family, vector).map_err(|m| Error::VectorsInvalid {
            detail: format!(
                "{}: {m}; the reference core does not reproduce this vector (a tampered \
                 expectation, or a core bug)",
                set.file(family)
                    .map_or_else(|| family.file_name(), |f| f.path.clone())
            ),
        })?;
    }
    out(&format!(
        "verified {} vectors in {} files ({source}): JSON Schema, content IDs, manifest hashes \
         and the reference core agree; root_sha256 {}\n",
        set.len(),
        set.files.len(),
        set.manifest.root_sha256
    ))?;
    Ok(exit::SUCCESS)
}

/// Render the v1 set with the generator; compare (`--check`) or write.
fn regenerate(check: bool, dir: Option<&Path>) -> Result<u8, Error> {
    let rendered = render_v1().map_err(|e| Error::VectorsInvalid {
        detail: format!("generator: {e}"),
    })?;
    if check {
        let result = match dir {
            Some(dir) => diff_files(&rendered, |name| {
                std::fs::read_to_string(dir.join(name)).ok()
            }),
            None => diff_files(&rendered, |name| {
                V1_FILES
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, t)| (*t).to_owned())
            }),
        };
        result.map_err(|diff| Error::RegenerateMismatch {
            detail: match dir {
                Some(dir) => format!("{}: {diff}", dir.display()),
                None => format!("embedded vectors/v1: {diff}"),
            },
        })?;
        out(&format!(
            "regenerate --check: all {} files match the generator output byte for byte ({})\n",
            rendered.len(),
            dir.map_or_else(|| "embedded".to_owned(), |d| d.display().to_string())
        ))?;
        return Ok(exit::SUCCESS);
    }
    let dir = dir.unwrap_or(Path::new(DEFAULT_VECTORS_DIR));
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "vectors regenerate: {} is not a directory; run from the repository root or pass --dir",
            dir.display()
        )));
    }
    for (name, text) in &rendered {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|source| Error::Io {
            action: "cannot write vector file",
            path,
            source,
        })?;
    }
    out(&format!(
        "wrote {} files to {}\n",
        rendered.len(),
        dir.display()
    ))?;
    Ok(exit::SUCCESS)
}

/// List the embedded vectors.
fn list(family: Option<&str>, format: ListFormat) -> Result<u8, Error> {
    let only = match family {
        Some(name) => Some(Family::parse(name).ok_or_else(|| {
            let known: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
            Error::Usage(format!(
                "--family {name}: unknown family; use one of {}",
                known.join(", ")
            ))
        })?),
        None => None,
    };
    let (set, _) = load_vectors(None)?;
    let selected = set.iter().filter(|(f, _)| only.is_none_or(|o| o == *f));
    let text = match format {
        ListFormat::Text => selected
            .map(|(f, v)| format!("{f}::{}\t{}\t{}\n", v.id, v.status.as_str(), v.description))
            .collect::<String>(),
        ListFormat::Json => {
            let items: Vec<serde_json::Value> = selected
                .map(|(f, v)| {
                    serde_json::json!({
                        "family": f.as_str(),
                        "id": v.id,
                        "trial": format!("{f}::{}", v.id),
                        "status": v.status.as_str(),
                        "description": v.description,
                        "tags": v.tags,
                    })
                })
                .collect();
            let mut text = serde_json::to_string_pretty(&items).map_err(|e| Error::Harness {
                detail: format!("cannot serialise the list: {e}"),
            })?;
            text.push('\n');
            text
        }
    };
    out(&text)?;
    Ok(exit::SUCCESS)
}

/// Run a `schema` subcommand; returns the exit code.
pub fn schema(cmd: &SchemaCommand) -> Result<u8, Error> {
    match cmd {
        SchemaCommand::Print {
            schema,
            producer_role,
        } => {
            out(&crate::schema_install::print(schema, producer_role)?)?;
        }
        SchemaCommand::Install {
            dsn,
            schema,
            producer_role,
        } => {
            let dsn = Dsn::resolve(dsn.as_deref())?.ok_or_else(|| {
                Error::Usage(
                    "schema install: no database given; pass --dsn URL or set DATABASE_URL / PGHOST"
                        .into(),
                )
            })?;
            crate::schema_install::install(&dsn, schema, producer_role)?;
            out(&format!(
                "installed the contract v1 reference schema {schema} (producer role \
                 {producer_role}) into {}\n",
                dsn.redacted()
            ))?;
        }
    }
    Ok(exit::SUCCESS)
}

/// The shell completion script for `shell`, generated from the clap definition (so it never
/// lags behind a new flag).
pub fn completions_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = <crate::cli::Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, "awa-conformance", &mut buf);
    buf
}

/// `completions <shell>`: print the completion script.
pub fn completions(shell: clap_complete::Shell) -> Result<u8, Error> {
    out(&String::from_utf8_lossy(&completions_script(shell)))?;
    Ok(exit::SUCCESS)
}

/// The man page (roff), generated from the clap definition, exit-code table included.
pub fn man_page() -> Result<Vec<u8>, Error> {
    let cmd = <crate::cli::Cli as clap::CommandFactory>::command();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .render(&mut buf)
        .map_err(|e| Error::Harness {
            detail: format!("cannot render the man page: {e}"),
        })?;
    Ok(buf)
}

/// `man`: print the man page.
pub fn man() -> Result<u8, Error> {
    out(&String::from_utf8_lossy(&man_page()?))?;
    Ok(exit::SUCCESS)
}

#[cfg(test)]
mod completion_tests {
    use super::*;

    #[test]
    fn completions_cover_subcommands_and_flags() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let text = String::from_utf8(completions_script(shell)).unwrap();
            for word in ["awa-conformance", "schema", "vectors", "dsn", "junit"] {
                assert!(text.contains(word), "{shell:?} completions lack {word}");
            }
        }
    }

    #[test]
    fn man_page_is_roff_with_exit_codes() {
        let text = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(text.contains(".TH awa-conformance"), "{text:.200}");
        assert!(text.contains("dsn"), "no --dsn");
        assert!(text.contains("completions"), "no completions subcommand");
        assert!(text.contains("Exit codes"));
    }
}
