//! The `vectors`, `schema`, `completions` and `man` subcommands (the `run` action lives in
//! [`crate::run`]).

use std::path::Path;

use awa_conformance_vectors::{check_vector, diff_files, render_all, Family, EMBEDDED};

use crate::cli::{DbOptions, ListFormat, ReportCommand, SchemaCommand, VectorsCommand};
use crate::error::Error;
use crate::exit;
use crate::pg::Dsn;
use crate::vector_set::load_vectors;

/// Where `vectors regenerate` writes when no `--vectors-dir` is given (run from the repository
/// root): the vectors root, holding one directory per release (`v1/`, `v1.1/`).
const DEFAULT_VECTORS_DIR: &str = "vectors";

/// Write `text` to stdout (a closed pipe is not an error worth a non-zero exit).
fn out(text: &str) -> Result<(), Error> {
    crate::console::print(text, "cannot write to")
}

/// `-V` / `--version`: the kit version, the contract version it tests, and the root hash of
/// the embedded vectors' manifest (what a report's provenance records), one per line.
pub fn version() -> Result<u8, Error> {
    let (set, _) = load_vectors(None)?;
    // Every release the run checks, oldest first: a consumer pins any of these roots.
    let mut roots = String::new();
    for m in set.bases.iter().chain(std::iter::once(&set.manifest)) {
        roots.push_str(&format!(
            "vectors v{} root_sha256 {}\n",
            m.vectors_version, m.root_sha256
        ));
    }
    out(&format!(
        "awa-conformance {}\ncontract v{} (revision 1.2)\n{roots}",
        env!("CARGO_PKG_VERSION"),
        awa_conformance_core::CONTRACT_VERSION,
    ))?;
    Ok(exit::SUCCESS)
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
    for file in &set.files {
        for vector in &file.vectors {
            check_vector(file.family, vector).map_err(|m| Error::VectorsInvalid {
                detail: format!(
                    "{}: {m}; the reference core does not reproduce this vector (a tampered \
                     expectation, or a core bug)",
                    file.path
                ),
            })?;
        }
    }
    let releases: Vec<String> = set
        .manifests()
        .map(|m| format!("v{} (root_sha256 {})", m.vectors_version, m.root_sha256))
        .collect();
    let errata: usize = set.errata.iter().map(|e| e.entries.len()).sum();
    out(&format!(
        "verified {} vectors in {} files of {} ({source}): JSON Schema, content IDs, manifest \
         hashes and pins, {errata} errata naming existing vectors, and the reference core \
         agree; root_sha256 {}\n",
        set.len(),
        set.files.len(),
        releases.join(" + "),
        set.manifest.root_sha256
    ))?;
    Ok(exit::SUCCESS)
}

/// Render every release with the generator; compare (`--check`) or write. `dir` is the vectors
/// root holding one directory per release (`v1/`, `v1.1/`); without it, `--check` compares
/// the embedded files and writing goes to `./vectors`.
fn regenerate(check: bool, dir: Option<&Path>) -> Result<u8, Error> {
    let rendered = render_all().map_err(|e| Error::VectorsInvalid {
        detail: format!("generator: {e}"),
    })?;
    let files: usize = rendered.iter().map(|(_, f)| f.len()).sum();
    if let Some(dir) = dir.filter(|d| d.join("manifest.json").is_file()) {
        return Err(Error::Usage(format!(
            "vectors regenerate: {} is one release's directory; pass the vectors root that holds \
             {} (e.g. --vectors-dir vectors)",
            dir.display(),
            rendered
                .iter()
                .map(|(r, _)| format!("{r}/"))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    if check {
        for (release, files) in &rendered {
            let result = match dir {
                Some(dir) => diff_files(files, |name| {
                    std::fs::read_to_string(dir.join(release).join(name)).ok()
                }),
                None => diff_files(files, |name| {
                    EMBEDDED
                        .iter()
                        .find(|(label, _)| label.rsplit('/').next() == Some(*release))
                        .and_then(|(_, texts)| texts.iter().find(|(n, _)| *n == name))
                        .map(|(_, t)| (*t).to_owned())
                }),
            };
            result.map_err(|diff| Error::RegenerateMismatch {
                detail: match dir {
                    Some(dir) => format!("{}: {diff}", dir.join(release).display()),
                    None => format!("embedded vectors/{release}: {diff}"),
                },
            })?;
        }
        out(&format!(
            "regenerate --check: all {files} files of {} match the generator output byte for \
             byte ({})\n",
            rendered
                .iter()
                .map(|(r, _)| *r)
                .collect::<Vec<_>>()
                .join(" and "),
            dir.map_or_else(|| "embedded".to_owned(), |d| d.display().to_string())
        ))?;
        return Ok(exit::SUCCESS);
    }
    let dir = dir.unwrap_or(Path::new(DEFAULT_VECTORS_DIR));
    if !dir.is_dir() {
        return Err(Error::Usage(format!(
            "vectors regenerate: {} is not a directory; run from the repository root or pass \
             --vectors-dir",
            dir.display()
        )));
    }
    for (release, files) in &rendered {
        let release_dir = dir.join(release);
        std::fs::create_dir_all(&release_dir).map_err(|source| Error::Io {
            action: "cannot create vector directory",
            path: release_dir.clone(),
            source,
        })?;
        for (name, text) in files {
            let path = release_dir.join(name);
            std::fs::write(&path, text).map_err(|source| Error::Io {
                action: "cannot write vector file",
                path,
                source,
            })?;
        }
    }
    out(&format!("wrote {files} files to {}\n", dir.display()))?;
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
                        "expected_error": matches!(v.case, awa_conformance_vectors::Case::Rejected(_)),
                        "erratum": v.erratum,
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

/// The DSN of a `schema` subcommand (required: these commands never start a cluster).
fn schema_dsn(target: &DbOptions, what: &str) -> Result<Dsn, Error> {
    Dsn::resolve(target.dsn.as_deref())?.ok_or_else(|| {
        Error::Usage(format!(
            "schema {what}: no database given; pass --dsn URL or set DATABASE_URL / PGHOST"
        ))
    })
}

/// Run a `schema` subcommand; returns the exit code.
pub fn schema(cmd: &SchemaCommand) -> Result<u8, Error> {
    use crate::schema_install::{self as install, Installed};
    match cmd {
        SchemaCommand::Print { names } => {
            out(&install::print(&names.schema, &names.producer_role)?)?;
        }
        SchemaCommand::Install { target, force } => {
            let dsn = schema_dsn(target, "install")?;
            let (schema, role) = (&target.names.schema, &target.names.producer_role);
            let done = install::install(&dsn, schema, role, *force)?;
            out(&match done {
                Installed::Installed => format!(
                    "installed the contract v1 reference schema {schema} (producer role {role}) \
                     into {}\n",
                    dsn.redacted()
                ),
                Installed::AlreadyThere => format!(
                    "the contract v1 reference schema {schema} is already installed in {}, \
                     identical; nothing changed\n",
                    dsn.redacted()
                ),
                Installed::Overwritten => format!(
                    "overwrote the different implementation in schema {schema} with the contract \
                     v1 reference (--force) in {}\n",
                    dsn.redacted()
                ),
            })?;
        }
        SchemaCommand::Status { target, all } => {
            let dsn = schema_dsn(target, "status")?;
            let status = install::status(&dsn, &target.names.schema, &target.names.producer_role)?;
            let limit = (!*all).then_some(install::STATUS_DETAIL_LINES);
            out(&status.report(&target.names.schema, limit))?;
            return Ok(status.exit_code());
        }
        SchemaCommand::Uninstall { target } => {
            let dsn = schema_dsn(target, "uninstall")?;
            let removed =
                install::uninstall(&dsn, &target.names.schema, &target.names.producer_role)?;
            let mut text = format!(
                "removed what schema install created in {}: {} object(s){}\n",
                dsn.redacted(),
                removed.objects.len(),
                if removed.schema {
                    format!(" and schema {}", target.names.schema)
                } else {
                    String::new()
                }
            );
            match removed.role {
                Ok(true) => text.push_str(&format!(
                    "removed producer role {}\n",
                    target.names.producer_role
                )),
                Ok(false) => {}
                Err(why) => text.push_str(&format!(
                    "kept producer role {}: {why}\n",
                    target.names.producer_role
                )),
            }
            out(&text)?;
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

/// Run a `report` subcommand; returns the exit code.
pub fn report(cmd: &ReportCommand) -> Result<u8, Error> {
    use crate::report::page::{self, Comparison, PageError, Source};
    let usage = |e: PageError| match e {
        PageError::Read { .. }
        | PageError::NotAReport { .. }
        | PageError::VerdictDisagrees { .. }
        | PageError::Write { .. } => Error::caused(crate::error::Kind::Usage, e),
        PageError::Render { .. } => Error::Harness {
            detail: e.to_string(),
        },
    };
    let load = |args: &[String]| {
        let sources: Vec<Source> = args.iter().map(|a| Source::parse(a)).collect();
        Comparison::load(&sources).map_err(usage)
    };
    match cmd {
        ReportCommand::Html {
            out: dir,
            kill_matrix,
            reports,
        } => {
            let cmp = load(reports)?;
            let kills = kill_matrix
                .iter()
                .map(|p| {
                    std::fs::read_to_string(p)
                        .map(|markdown| page::html::KillMatrix {
                            title: p
                                .file_name()
                                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                            markdown,
                        })
                        .map_err(|e| {
                            usage(PageError::Read {
                                path: p.display().to_string(),
                                reason: e.to_string(),
                            })
                        })
                })
                .collect::<Result<Vec<_>, Error>>()?;
            page::html::write(&cmp, &kills, dir).map_err(usage)?;
            out(&format!(
                "{}: {} implementations x {} families and suites, {} cases not passed\n",
                dir.join(page::html::PAGE_FILE).display(),
                cmp.implementations.len(),
                cmp.columns.len(),
                cmp.details.len()
            ))?;
        }
        ReportCommand::Badge { out: dir, report } => {
            let r = page::read(std::path::Path::new(report)).map_err(usage)?;
            let b = page::badge::write(&r, dir).map_err(usage)?;
            // The badge's words hold the report's level: shown on the terminal inert.
            out(&format!(
                "{}: {} | {}\n",
                dir.join(page::badge::SVG_FILE).display(),
                crate::inert::one_line(&b.label),
                crate::inert::one_line(&b.message)
            ))?;
        }
        ReportCommand::Diff { old, new } => {
            let cmp = load(&[old.clone(), new.clone()])?;
            out(&page::diff::markdown(&cmp))?;
        }
        ReportCommand::Compatibility { check, reports } => {
            let text = page::compatibility::markdown(&load(reports)?);
            if let Some(file) = check {
                let on_disk = std::fs::read_to_string(file).unwrap_or_default();
                if on_disk != text {
                    use std::io::Write as _;
                    let _ = writeln!(
                        std::io::stderr(),
                        "awa-conformance: {} differs from the compatibility table of these \
                         reports; regenerate it (scripts/results-page.sh --bless) and commit it",
                        file.display()
                    );
                    return Ok(exit::NONCONFORMANT);
                }
                out(&format!("{}: current\n", file.display()))?;
            } else {
                out(&text)?;
            }
        }
    }
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
