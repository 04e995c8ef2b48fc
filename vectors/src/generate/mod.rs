//! The generator (`maintainer` feature): assembles every release from the families' cases
//! (each family module defines its case *inputs* per release; intermediate and expected fields
//! are computed with the core), gives IDs by the ADR 0015 rule, renders files with our own
//! pretty-printer, and writes each release's manifest (and v1.1's errata).

use awa_conformance_core as core;

use crate::check::{content_id_json, root_sha256, sha256_hex};
use crate::family::{with_def, FamilyDef};
use crate::load::{ERRATA_FILE, MANIFEST_FILE};
use crate::model::{Case, Status, Vector};
use crate::pretty::{render, Json};
use crate::Family;

mod errata;
pub(crate) mod inputs;

/// The generator could not build a vector (a bug in the case definitions, never in data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The core rejected a case input.
    #[error("{family} case {description:?}: the core rejected the input: {source}; fix the case definition in the family's module (vectors/src/family/)")]
    Core {
        /// The family.
        family: Family,
        /// The case's description.
        description: String,
        /// The core error.
        source: core::Error,
    },
    /// Two cases have the same content (and so the same ID).
    #[error("{family}: cases {first:?} and {second:?} share ID {id}; remove one from the family's module (vectors/src/family/)")]
    DuplicateId {
        /// The family.
        family: Family,
        /// The shared ID.
        id: String,
        /// The first case's description.
        first: String,
        /// The second case's description.
        second: String,
    },
    /// A documented released hazard no longer reproduces.
    #[error("hazard check failed: {0}; the core no longer matches released Awa")]
    Hazard(String),
    /// A rejected-input case whose input does not decode, or that the core accepts.
    #[error("{family} case {description:?}: {message}; fix the case definition in the family's module (vectors/src/family/)")]
    Rejected {
        /// The family.
        family: Family,
        /// The case's description.
        description: String,
        /// What is wrong.
        message: String,
    },
    /// A later release reuses an ID of an earlier one.
    #[error("{family}: case {description:?} has ID {id}, already published in an earlier release; IDs are never reused: change the case")]
    Reused {
        /// The family.
        family: Family,
        /// The reused ID.
        id: String,
        /// The case's description.
        description: String,
    },
}

pub(crate) enum SpecCase {
    Computed(Result<Case, core::Error>),
    Rejected(Result<Case, String>),
}

pub(crate) struct Spec {
    description: String,
    status: Status,
    tags: Vec<String>,
    case: SpecCase,
}

pub(crate) fn spec(
    description: impl Into<String>,
    tags: &[&str],
    case: Result<Case, core::Error>,
) -> Spec {
    Spec {
        description: description.into(),
        status: Status::Normative,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        case: SpecCase::Computed(case),
    }
}

/// A rejected-input case: `input` is run through the core, which must refuse it.
pub(crate) fn rejected(description: &str, tags: &[&str], family: Family, input: Json) -> Spec {
    Spec {
        description: description.to_owned(),
        status: Status::Normative,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        case: SpecCase::Rejected(Case::rejected(family, input)),
    }
}

pub(crate) fn informative(mut s: Spec) -> Spec {
    s.status = Status::Informative;
    s
}

pub(crate) fn id_of(family: Family, case: &Case) -> Result<String, core::Error> {
    content_id_json(family, &case.input_json(), &case.expected_json())
}

pub(crate) fn build(family: Family, specs: Vec<Spec>) -> Result<Vec<Vector>, GenerateError> {
    let mut out: Vec<Vector> = Vec::with_capacity(specs.len());
    for s in specs {
        let core_err = |source| GenerateError::Core {
            family,
            description: s.description.clone(),
            source,
        };
        let rejected_err = |message: String| GenerateError::Rejected {
            family,
            description: s.description.clone(),
            message,
        };
        let case = match &s.case {
            SpecCase::Computed(c) => c.clone().map_err(core_err)?,
            SpecCase::Rejected(c) => {
                let case = c.clone().map_err(rejected_err)?;
                if matches!(&case, Case::Rejected(r) if r.error.is_none()) {
                    return Err(rejected_err("the core accepts this input".to_owned()));
                }
                case
            }
        };
        let id = id_of(family, &case).map_err(core_err)?;
        if let Some(prev) = out.iter().find(|v| v.id == id) {
            return Err(GenerateError::DuplicateId {
                family,
                id,
                first: prev.description.clone(),
                second: s.description,
            });
        }
        let mut tags = s.tags;
        tags.sort();
        tags.dedup();
        out.push(Vector {
            id,
            description: s.description,
            status: s.status,
            tags,
            case,
            erratum: None,
        });
    }
    Ok(out)
}

/// A vector release the generator writes, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// `vectors/v1`: every family; frozen.
    V1,
    /// `vectors/v1.1`: additions to seven families and the errata; frozen.
    V1_1,
}

/// One family's file in one release: the envelope description and its cases in file order
/// (computed only when that release is generated).
pub(crate) struct ReleaseFile {
    description: &'static str,
    cases: fn() -> Result<Vec<Spec>, GenerateError>,
}

impl ReleaseFile {
    pub(crate) const fn new(
        description: &'static str,
        cases: fn() -> Result<Vec<Spec>, GenerateError>,
    ) -> Self {
        Self { description, cases }
    }
}

/// A family's file in each release, `None` where the release adds nothing to the family. One
/// field per [`Release`]: a new release does not compile until every family module says what it
/// adds.
pub(crate) struct Releases {
    pub(crate) v1: Option<ReleaseFile>,
    pub(crate) v1_1: Option<ReleaseFile>,
}

impl Releases {
    fn file(self, release: Release) -> Option<ReleaseFile> {
        match release {
            Release::V1 => self.v1,
            Release::V1_1 => self.v1_1,
        }
    }
}

/// Every family's vectors in `release`, in [`Family::ALL`] order (families the release adds
/// nothing to are left out), with each file's description.
///
/// # Errors
/// A case definition the core rejects (or accepts, for a rejected-input case), two cases with
/// one ID, or a lost released hazard.
fn release_vectors(release: Release) -> Result<Generated, GenerateError> {
    let mut out = Vec::new();
    for family in Family::ALL {
        let Some(file) = with_def!(family, D => <D as FamilyDef>::RELEASES).file(release) else {
            continue;
        };
        out.push((family, file.description, build(family, (file.cases)()?)?));
    }
    Ok(out)
}

/// Render one family file (envelope + vectors) exactly as committed.
fn render_family(family: Family, description: &str, vectors: &[Vector]) -> String {
    render(&Json::obj([
        ("format", Json::str("awa-conformance-vectors")),
        ("format_version", Json::Int(1)),
        ("family", Json::str(family.as_str())),
        (
            "contract_version",
            Json::Int(i64::from(core::CONTRACT_VERSION)),
        ),
        ("description", Json::str(description)),
        ("retired", Json::Arr(vec![])),
        (
            "vectors",
            Json::Arr(vectors.iter().map(Vector::to_json).collect()),
        ),
    ]))
}

fn manifest_files(files: &[(String, String, usize)]) -> (Json, Vec<(String, String)>) {
    let mut sorted: Vec<&(String, String, usize)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let entries: Vec<(String, String)> = sorted
        .iter()
        .map(|(p, t, _)| (p.clone(), sha256_hex(t.as_bytes())))
        .collect();
    let listing = Json::Arr(
        sorted
            .iter()
            .zip(&entries)
            .map(|((p, _, n), (_, sha))| {
                Json::obj([
                    ("path", Json::str(p)),
                    ("sha256", Json::str(sha)),
                    ("vectors", Json::Int(i64::try_from(*n).unwrap_or(i64::MAX))),
                ])
            })
            .collect(),
    );
    (listing, entries)
}

/// Render a v1 (format 1) `manifest.json` for `(file name, contents, vector count)` entries.
#[must_use]
pub fn render_manifest(files: &[(String, String, usize)]) -> String {
    let (listing, entries) = manifest_files(files);
    render(&Json::obj([
        ("format", Json::str("awa-conformance-manifest")),
        ("format_version", Json::Int(1)),
        ("vectors_version", Json::Int(1)),
        ("files", listing),
        ("root_sha256", Json::Str(root_sha256(&entries))),
    ]))
}

/// One generated release: its directory name (`v1`, `v1.1`) and `(file name, contents)`
/// files, family files in name order, then `errata.json` (when any), then `manifest.json`.
pub type RenderedRelease = (&'static str, Vec<(String, String)>);

/// One release's vectors: `(family, file description, vectors)` in [`Family::ALL`] order.
pub(crate) type Generated = Vec<(Family, &'static str, Vec<Vector>)>;

fn render_v1(v1: &Generated) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut counted = Vec::new();
    for (family, description, vectors) in v1 {
        let text = render_family(*family, description, vectors);
        counted.push((family.file_name(), text.clone(), vectors.len()));
        out.push((family.file_name(), text));
    }
    out.push((MANIFEST_FILE.to_owned(), render_manifest(&counted)));
    out
}

fn render_v1_1(v1: &Generated, v1_root: &str) -> Result<Vec<(String, String)>, GenerateError> {
    let published: std::collections::HashSet<&str> = v1
        .iter()
        .flat_map(|(_, _, vs)| vs.iter().map(|v| v.id.as_str()))
        .collect();
    let v11 = release_vectors(Release::V1_1)?;
    let mut out = Vec::new();
    let mut counted = Vec::new();
    for (family, description, vectors) in &v11 {
        if let Some(v) = vectors.iter().find(|v| published.contains(v.id.as_str())) {
            return Err(GenerateError::Reused {
                family: *family,
                id: v.id.clone(),
                description: v.description.clone(),
            });
        }
        let text = render_family(*family, description, vectors);
        counted.push((family.file_name(), text.clone(), vectors.len()));
        out.push((family.file_name(), text));
    }
    let (errata, count) = errata::errata(v1, &v11)?;
    let errata_text = render(&errata);
    let (listing, mut entries) = manifest_files(&counted);
    let errata_sha = sha256_hex(errata_text.as_bytes());
    entries.push((ERRATA_FILE.to_owned(), errata_sha.clone()));
    let manifest = render(&Json::obj([
        ("format", Json::str("awa-conformance-manifest")),
        ("format_version", Json::Int(2)),
        ("vectors_version", Json::str("1.1")),
        (
            "extends",
            Json::Arr(vec![Json::obj([
                ("vectors_version", Json::str("1")),
                ("path", Json::str("../v1")),
                ("root_sha256", Json::str(v1_root)),
            ])]),
        ),
        ("files", listing),
        (
            "errata",
            Json::obj([
                ("path", Json::str(ERRATA_FILE)),
                ("sha256", Json::Str(errata_sha)),
                (
                    "errata",
                    Json::Int(i64::try_from(count).unwrap_or(i64::MAX)),
                ),
            ]),
        ),
        ("root_sha256", Json::Str(root_sha256(&entries))),
    ]));
    out.push((ERRATA_FILE.to_owned(), errata_text));
    out.push((MANIFEST_FILE.to_owned(), manifest));
    Ok(out)
}

/// Every release as generated, oldest first: `v1` then `v1.1`. What `awa-conformance vectors
/// regenerate` writes and `--check` compares byte for byte.
///
/// # Errors
/// A case definition the core rejects, two cases with one ID (also across releases), or a
/// lost released hazard.
pub fn render_all() -> Result<Vec<RenderedRelease>, GenerateError> {
    let v1 = release_vectors(Release::V1)?;
    let v1_files = render_v1(&v1);
    let v1_root = v1_files
        .last()
        .and_then(|(_, t)| serde_json::from_str::<serde_json::Value>(t).ok())
        .and_then(|m| {
            m.get("root_sha256")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let v11 = render_v1_1(&v1, &v1_root)?;
    Ok(vec![("v1", v1_files), ("v1.1", v11)])
}

/// The first difference between rendered files and files on disk (for `regenerate --check`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: differs from the generator output (expected {expected:?}, found {found:?}); frozen files are never edited: restore from git, or if the generator changed on purpose publish a new vector set")]
pub struct FileDiff {
    /// The file name.
    pub file: String,
    /// 1-based line of the first difference.
    pub line: usize,
    /// The generator's line (empty past the end).
    pub expected: String,
    /// The file's line (empty past the end, or `<missing file>`).
    pub found: String,
}

/// Compare rendered `(name, contents)` files with what `read(name)` returns; the first
/// difference in file order, or `Ok` when every byte matches.
///
/// # Errors
/// The first differing file and line.
pub fn diff_files(
    rendered: &[(String, String)],
    read: impl Fn(&str) -> Option<String>,
) -> Result<(), FileDiff> {
    for (name, want) in rendered {
        let Some(have) = read(name) else {
            return Err(FileDiff {
                file: name.clone(),
                line: 1,
                expected: want.lines().next().unwrap_or_default().to_owned(),
                found: "<missing file>".to_owned(),
            });
        };
        if have == *want {
            continue;
        }
        let (mut w, mut h) = (want.split_inclusive('\n'), have.split_inclusive('\n'));
        let mut line = 1;
        loop {
            match (w.next(), h.next()) {
                (Some(a), Some(b)) if a == b => line += 1,
                (a, b) => {
                    return Err(FileDiff {
                        file: name.clone(),
                        line,
                        expected: a.unwrap_or_default().trim_end_matches('\n').to_owned(),
                        found: b.unwrap_or_default().trim_end_matches('\n').to_owned(),
                    })
                }
            }
        }
    }
    Ok(())
}
