//! Loading vector files (embedded or on disk) into typed [`VectorSet`]s, with errors that name
//! the file, the vector ID and the JSON path.

use std::path::Path;

use serde::Deserialize;

use crate::model::{parse_case, Status, Vector};
use crate::Family;

const FIX: &str =
    "restore the file from git or regenerate with `awa-conformance vectors regenerate`";

/// A vector file or manifest that cannot be read or decoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file cannot be read.
    #[error(
        "{file}: cannot read: {source}; point at a directory holding the v1 files (vectors/v1)"
    )]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("{file}:{line}:{column}: malformed JSON: {message}; {FIX}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The envelope (or the manifest) is wrong.
    #[error("{file}: {path}: {message}; {FIX}")]
    Envelope {
        /// The file.
        file: String,
        /// JSON path of the offending member.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// One vector does not decode.
    #[error("{file}: vector {id}: {path}: {message}; {FIX}")]
    Vector {
        /// The file.
        file: String,
        /// The vector's ID (or `#<index>` when it has none).
        id: String,
        /// JSON path inside the vector.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// One family file, decoded.
#[derive(Debug, Clone)]
pub struct VectorFile {
    /// The family.
    pub family: Family,
    /// The release it belongs to (its manifest's `vectors_version`: `"1"`, `"1.1"`).
    pub release: String,
    /// Where it came from (`vectors/v1/unique_key.json` or an on-disk path), for messages.
    pub path: String,
    /// The exact file text (what the manifest hashes).
    pub text: String,
    /// The parsed document (for schema validation and content-hash checks).
    pub json: serde_json::Value,
    /// The envelope's `description`.
    pub description: String,
    /// The envelope's `contract_version`.
    pub contract_version: u32,
    /// IDs published once and superseded; never reused.
    pub retired: Vec<String>,
    /// The vectors, in file order.
    pub vectors: Vec<Vector>,
}

/// One `files` entry of `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManifestEntry {
    /// File name inside the vectors directory (`unique_key.json`).
    pub path: String,
    /// Lowercase hex SHA-256 of the file bytes.
    pub sha256: String,
    /// Number of vectors in the file.
    pub vectors: usize,
}

/// The `errata` entry of a format-2 manifest.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrataEntry {
    /// File name inside the release directory (`errata.json`).
    pub path: String,
    /// Lowercase hex SHA-256 of the file bytes.
    pub sha256: String,
    /// Number of errata in the file.
    pub errata: usize,
}

/// One `extends` entry of a format-2 manifest: an earlier release this one adds to, pinned by
/// its root hash (ADR 0020).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    /// The earlier release's `vectors_version` (`"1"`).
    pub vectors_version: String,
    /// Its directory relative to this release's (`../v1`).
    pub path: String,
    /// Its manifest's `root_sha256`.
    pub root_sha256: String,
}

/// `manifest.json` of one release, decoded.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Where it came from, for messages.
    pub path: String,
    /// The exact file text.
    pub text: String,
    /// The parsed document (for schema validation).
    pub json: serde_json::Value,
    /// `vectors_version` as text (`"1"`, `"1.1"`).
    pub vectors_version: String,
    /// Earlier releases this one adds to (empty for v1).
    pub extends: Vec<Pin>,
    /// One entry per family file, sorted by path.
    pub files: Vec<ManifestEntry>,
    /// The errata file, when the release has one.
    pub errata: Option<ErrataEntry>,
    /// SHA-256 of the `sha256sum`-style listing of `files` (and the errata file).
    pub root_sha256: String,
}

/// One correction of a frozen vector's description or tags (its bytes never move).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Erratum {
    /// The corrected vector's ID.
    pub id: String,
    /// The corrected description, when it changes.
    #[serde(default)]
    pub description: Option<String>,
    /// The corrected tags, when they change.
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    /// Why: what the frozen text got wrong.
    pub reason: String,
}

/// `errata.json` of one release, decoded.
#[derive(Debug, Clone)]
pub struct Errata {
    /// Where it came from, for messages.
    pub path: String,
    /// The exact file text.
    pub text: String,
    /// The parsed document (for schema validation).
    pub json: serde_json::Value,
    /// The corrections, in file order.
    pub entries: Vec<Erratum>,
}

/// Every loaded release: the family files of all of them, the newest manifest (what a
/// consumer pins), the manifests it extends, and the errata applied to the vectors.
#[derive(Debug, Clone)]
pub struct VectorSet {
    /// Family files, oldest release first, each release in [`Family::ALL`] order.
    pub files: Vec<VectorFile>,
    /// The newest release's manifest.
    pub manifest: Manifest,
    /// The manifests of the releases the newest one extends, oldest first.
    pub bases: Vec<Manifest>,
    /// Errata files, oldest release first; already applied to `files`' vectors.
    pub errata: Vec<Errata>,
}

fn syntax(file: &str, e: &serde_json::Error) -> LoadError {
    LoadError::Syntax {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    }
}

fn envelope(file: &str, path: &str, message: impl Into<String>) -> LoadError {
    LoadError::Envelope {
        file: file.to_owned(),
        path: path.to_owned(),
        message: message.into(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnvelope {
    format: String,
    format_version: u32,
    family: String,
    contract_version: u32,
    description: String,
    retired: Vec<String>,
    vectors: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVector {
    id: String,
    description: String,
    status: String,
    #[serde(default)]
    tags: Vec<String>,
    input: Option<serde_json::Value>,
    intermediate: Option<serde_json::Value>,
    expected: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    format: String,
    format_version: u32,
    vectors_version: serde_json::Value,
    #[serde(default)]
    extends: Vec<Pin>,
    files: Vec<ManifestEntry>,
    #[serde(default)]
    errata: Option<ErrataEntry>,
    root_sha256: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawErrata {
    format: String,
    format_version: u32,
    #[allow(dead_code, reason = "read by people; validated by the schema")]
    description: String,
    errata: Vec<Erratum>,
}

impl VectorFile {
    /// Decode one family file. `file` labels messages; `expect` (when known from the file
    /// name) must equal the envelope's `family`.
    ///
    /// # Errors
    /// [`LoadError`] naming the file, and the vector ID and JSON path when one vector is bad.
    pub fn parse(file: &str, expect: Option<Family>, text: &str) -> Result<Self, LoadError> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
        let env =
            RawEnvelope::deserialize(&json).map_err(|e| envelope(file, "$", e.to_string()))?;
        if env.format != "awa-conformance-vectors" {
            return Err(envelope(
                file,
                "format",
                format!("{:?} is not \"awa-conformance-vectors\"", env.format),
            ));
        }
        if env.format_version != 1 {
            return Err(envelope(
                file,
                "format_version",
                format!(
                    "{} is not 1 (this loader reads format 1)",
                    env.format_version
                ),
            ));
        }
        let family = Family::parse(&env.family)
            .ok_or_else(|| envelope(file, "family", format!("unknown family {:?}", env.family)))?;
        if let Some(want) = expect.filter(|w| *w != family) {
            return Err(envelope(
                file,
                "family",
                format!("file holds {family} vectors but is named for {want}"),
            ));
        }
        let mut vectors = Vec::with_capacity(env.vectors.len());
        for (i, raw) in env.vectors.iter().enumerate() {
            let fallback_id = raw
                .get("id")
                .and_then(serde_json::Value::as_str)
                .map_or_else(|| format!("#{i}"), str::to_owned);
            let verr = |path: &str, message: String| LoadError::Vector {
                file: file.to_owned(),
                id: fallback_id.clone(),
                path: path.to_owned(),
                message,
            };
            let rv = RawVector::deserialize(raw).map_err(|e| verr("$", e.to_string()))?;
            let status = match rv.status.as_str() {
                "normative" => Status::Normative,
                "informative" => Status::Informative,
                other => {
                    return Err(verr(
                        "status",
                        format!("{other:?} is not normative or informative"),
                    ))
                }
            };
            let case = parse_case(
                family,
                rv.input.as_ref(),
                rv.intermediate.as_ref(),
                rv.expected.as_ref(),
            )
            .map_err(|f| verr(&f.path, f.message))?;
            vectors.push(Vector {
                id: rv.id,
                description: rv.description,
                status,
                tags: rv.tags,
                case,
                erratum: None,
            });
        }
        Ok(Self {
            family,
            release: String::new(),
            path: file.to_owned(),
            text: text.to_owned(),
            json,
            description: env.description,
            contract_version: env.contract_version,
            retired: env.retired,
            vectors,
        })
    }
}

impl Manifest {
    /// Decode `manifest.json` (format 1: v1; format 2: a release that extends earlier ones).
    ///
    /// # Errors
    /// [`LoadError`] naming the file.
    pub fn parse(file: &str, text: &str) -> Result<Self, LoadError> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
        let raw =
            RawManifest::deserialize(&json).map_err(|e| envelope(file, "$", e.to_string()))?;
        if raw.format != "awa-conformance-manifest" || !matches!(raw.format_version, 1 | 2) {
            return Err(envelope(
                file,
                "format",
                "not an awa-conformance-manifest of format_version 1 or 2",
            ));
        }
        let vectors_version = match &raw.vectors_version {
            serde_json::Value::Number(n) if n.as_u64().is_some() => n.to_string(),
            serde_json::Value::String(s) if !s.is_empty() => s.clone(),
            other => {
                return Err(envelope(
                    file,
                    "vectors_version",
                    format!("{other} is neither a release number nor a version string"),
                ))
            }
        };
        Ok(Self {
            path: file.to_owned(),
            text: text.to_owned(),
            json,
            vectors_version,
            extends: raw.extends,
            files: raw.files,
            errata: raw.errata,
            root_sha256: raw.root_sha256,
        })
    }
}

impl Errata {
    /// Decode `errata.json`.
    ///
    /// # Errors
    /// [`LoadError`] naming the file.
    pub fn parse(file: &str, text: &str) -> Result<Self, LoadError> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
        let raw = RawErrata::deserialize(&json).map_err(|e| envelope(file, "$", e.to_string()))?;
        if raw.format != "awa-conformance-errata" || raw.format_version != 1 {
            return Err(envelope(
                file,
                "format",
                "not an awa-conformance-errata of format_version 1",
            ));
        }
        Ok(Self {
            path: file.to_owned(),
            text: text.to_owned(),
            json,
            entries: raw.errata,
        })
    }
}

/// One release's files: its family files, manifest and errata.
struct Release {
    files: Vec<VectorFile>,
    manifest: Manifest,
    errata: Option<Errata>,
}

/// The errata file's name inside a release directory.
pub(crate) const ERRATA_FILE: &str = "errata.json";
/// The manifest's name inside a release directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

fn release_from_texts(dir: &str, texts: &[(&str, &str)]) -> Result<Release, LoadError> {
    let label = |name: &str| format!("{}/{name}", dir.trim_end_matches('/'));
    let find = |name: &str| {
        texts
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| LoadError::Io {
                file: label(name),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "missing from the vector set",
                ),
            })
    };
    let manifest = Manifest::parse(&label(MANIFEST_FILE), find(MANIFEST_FILE)?)?;
    // v1 has every family; a later release only the families it adds to. Files the manifest
    // does not list are loaded too, so that check_manifest names them.
    let mut files = Vec::new();
    for family in Family::ALL {
        let name = family.file_name();
        let listed = manifest.files.iter().any(|e| e.path == name);
        let required = listed || manifest.extends.is_empty();
        let text = match texts.iter().find(|(n, _)| *n == name) {
            Some((_, t)) => *t,
            None if required => find(&name)?,
            None => continue,
        };
        let mut f = VectorFile::parse(&label(&name), Some(family), text)?;
        f.release.clone_from(&manifest.vectors_version);
        files.push(f);
    }
    let errata = match (
        &manifest.errata,
        texts.iter().find(|(n, _)| *n == ERRATA_FILE),
    ) {
        (_, Some((_, t))) => Some(Errata::parse(&label(ERRATA_FILE), t)?),
        (Some(e), None) => Some(Errata::parse(&label(&e.path), find(&e.path)?)?),
        (None, None) => None,
    };
    Ok(Release {
        files,
        manifest,
        errata,
    })
}

impl VectorSet {
    /// Decode one release from `(file name, text)` pairs: its `<family>.json` files,
    /// `manifest.json` and (when it has one) `errata.json`. `dir` prefixes file names in messages.
    ///
    /// # Errors
    /// A missing or undecodable file.
    pub fn from_texts(dir: &str, texts: &[(&str, &str)]) -> Result<Self, LoadError> {
        Self::from_releases(&[(dir, texts)])
    }

    /// Decode several releases, oldest first (each as in [`VectorSet::from_texts`]); the last
    /// one's manifest is the set's. Errata are applied to the vectors they name.
    ///
    /// # Errors
    /// A missing or undecodable file.
    pub fn from_releases(releases: &[(&str, &[(&str, &str)])]) -> Result<Self, LoadError> {
        let mut files = Vec::new();
        let mut manifests = Vec::new();
        let mut errata = Vec::new();
        for (dir, texts) in releases {
            let r = release_from_texts(dir, texts)?;
            files.extend(r.files);
            manifests.push(r.manifest);
            errata.extend(r.errata);
        }
        let manifest = manifests.pop().ok_or_else(|| LoadError::Io {
            file: "(no release)".to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no vector release given"),
        })?;
        let mut set = Self {
            files,
            manifest,
            bases: manifests,
            errata,
        };
        set.apply_errata();
        Ok(set)
    }

    fn apply_errata(&mut self) {
        for e in self.errata.iter().flat_map(|x| &x.entries) {
            for v in self.files.iter_mut().flat_map(|f| f.vectors.iter_mut()) {
                if v.id == e.id {
                    if let Some(d) = &e.description {
                        v.description.clone_from(d);
                    }
                    if let Some(t) = &e.tags {
                        v.tags.clone_from(t);
                    }
                    v.erratum = Some(e.reason.clone());
                }
            }
        }
    }

    /// Load a release directory (one holding `manifest.json`) together with the releases its
    /// manifest extends (`extends[].path`, relative to it); or, given the vectors root holding
    /// the release directories, the newest release and its bases.
    ///
    /// # Errors
    /// A missing, unreadable or undecodable file.
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Self, LoadError> {
        let mut dir = dir.as_ref().to_path_buf();
        if !dir.join(MANIFEST_FILE).is_file() {
            if let Some(newest) = EMBEDDED.last() {
                let candidate = dir.join(newest.0.rsplit('/').next().unwrap_or_default());
                if candidate.join(MANIFEST_FILE).is_file() {
                    dir = candidate;
                }
            }
        }
        let mut chain: Vec<(String, Vec<(String, String)>)> = Vec::new();
        let mut next = Some(dir);
        while let Some(d) = next.take() {
            if chain.len() > 8 {
                return Err(envelope(
                    &d.display().to_string(),
                    "extends",
                    "more than 8 nested releases: the extends chain loops",
                ));
            }
            let texts = read_release_dir(&d)?;
            let manifest_text = texts
                .iter()
                .find(|(n, _)| n == MANIFEST_FILE)
                .map(|(_, t)| t.clone())
                .unwrap_or_default();
            let label = d.join(MANIFEST_FILE).display().to_string();
            let m = Manifest::parse(&label, &manifest_text)?;
            // One base per release: v1.1 extends v1 (a later release lists its direct base first).
            next = m.extends.first().map(|p| d.join(&p.path));
            chain.push((d.display().to_string(), texts));
        }
        chain.reverse();
        let borrowed: Vec<(String, Vec<(&str, &str)>)> = chain
            .iter()
            .map(|(d, t)| {
                (
                    d.clone(),
                    t.iter().map(|(n, x)| (n.as_str(), x.as_str())).collect(),
                )
            })
            .collect();
        let releases: Vec<(&str, &[(&str, &str)])> = borrowed
            .iter()
            .map(|(d, t)| (d.as_str(), t.as_slice()))
            .collect();
        Self::from_releases(&releases)
    }

    /// The file of one family in the newest release that has it.
    #[must_use]
    pub fn file(&self, family: Family) -> Option<&VectorFile> {
        self.files.iter().rev().find(|f| f.family == family)
    }

    /// Every vector with its family, in file order (oldest release first).
    pub fn iter(&self) -> impl Iterator<Item = (Family, &Vector)> {
        self.files
            .iter()
            .flat_map(|f| f.vectors.iter().map(move |v| (f.family, v)))
    }

    /// The vector with this ID.
    #[must_use]
    pub fn find(&self, id: &str) -> Option<(Family, &Vector)> {
        self.iter().find(|(_, v)| v.id == id)
    }

    /// Total number of vectors.
    #[must_use]
    pub fn len(&self) -> usize {
        self.files.iter().map(|f| f.vectors.len()).sum()
    }

    /// Whether the set holds no vectors.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every vector as its file's JSON object (oldest release first, file order) with
    /// `family` and `release` members added and the errata applied: `description` and `tags`
    /// corrected, and `erratum` holding the reason (absent when uncorrected).
    #[must_use]
    pub fn to_json_list(&self) -> serde_json::Value {
        let mut out = Vec::with_capacity(self.len());
        for f in &self.files {
            let raw = f.json.get("vectors").and_then(serde_json::Value::as_array);
            for (i, v) in f.vectors.iter().enumerate() {
                let mut obj = raw
                    .and_then(|r| r.get(i))
                    .and_then(serde_json::Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                obj.insert("family".to_owned(), f.family.as_str().into());
                obj.insert("release".to_owned(), f.release.clone().into());
                if let Some(reason) = &v.erratum {
                    obj.insert("description".to_owned(), v.description.clone().into());
                    obj.insert("tags".to_owned(), v.tags.clone().into());
                    obj.insert("erratum".to_owned(), reason.clone().into());
                }
                out.push(serde_json::Value::Object(obj));
            }
        }
        serde_json::Value::Array(out)
    }

    /// Every loaded manifest, oldest release first.
    pub fn manifests(&self) -> impl Iterator<Item = &Manifest> {
        self.bases.iter().chain(std::iter::once(&self.manifest))
    }
}

/// Every `*.json` file of a release directory as `(file name, text)`.
fn read_release_dir(dir: &Path) -> Result<Vec<(String, String)>, LoadError> {
    let io = |p: &Path, source| LoadError::Io {
        file: p.display().to_string(),
        source,
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    if !names.iter().any(|n| n == MANIFEST_FILE) {
        let p = dir.join(MANIFEST_FILE);
        return Err(io(
            &p,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no manifest.json: point at a release directory (vectors/v1.1) or the vectors root",
            ),
        ));
    }
    names
        .into_iter()
        .map(|n| {
            let p = dir.join(&n);
            std::fs::read_to_string(&p)
                .map(|t| (n, t))
                .map_err(|e| io(&p, e))
        })
        .collect()
}

/// The v1 files compiled into this crate: `(file name, text)`, manifest last.
pub const V1_FILES: [(&str, &str); 10] = [
    (
        "canonical_json.json",
        include_str!("../v1/canonical_json.json"),
    ),
    (
        "concurrency_digest.json",
        include_str!("../v1/concurrency_digest.json"),
    ),
    (
        "concurrency_shard.json",
        include_str!("../v1/concurrency_shard.json"),
    ),
    ("move_shard.json", include_str!("../v1/move_shard.json")),
    (
        "ordering_shard.json",
        include_str!("../v1/ordering_shard.json"),
    ),
    ("partition.json", include_str!("../v1/partition.json")),
    (
        "routing_precedence.json",
        include_str!("../v1/routing_precedence.json"),
    ),
    ("unique_key.json", include_str!("../v1/unique_key.json")),
    (
        "unique_states.json",
        include_str!("../v1/unique_states.json"),
    ),
    ("manifest.json", include_str!("../v1/manifest.json")),
];

/// The v1.1 files compiled into this crate: `(file name, text)`, manifest last.
pub const V1_1_FILES: [(&str, &str); 9] = [
    (
        "canonical_json.json",
        include_str!("../v1.1/canonical_json.json"),
    ),
    (
        "concurrency_digest.json",
        include_str!("../v1.1/concurrency_digest.json"),
    ),
    (
        "concurrency_shard.json",
        include_str!("../v1.1/concurrency_shard.json"),
    ),
    ("errata.json", include_str!("../v1.1/errata.json")),
    ("move_shard.json", include_str!("../v1.1/move_shard.json")),
    ("partition.json", include_str!("../v1.1/partition.json")),
    (
        "routing_precedence.json",
        include_str!("../v1.1/routing_precedence.json"),
    ),
    ("unique_key.json", include_str!("../v1.1/unique_key.json")),
    ("manifest.json", include_str!("../v1.1/manifest.json")),
];

/// Every embedded release, oldest first: `(directory label, files)`.
pub const EMBEDDED: [(&str, &[(&str, &str)]); 2] =
    [("vectors/v1", &V1_FILES), ("vectors/v1.1", &V1_1_FILES)];

/// Every embedded release (v1 and v1.1, errata applied): what the runner and the bindings use.
///
/// # Errors
/// Only if the embedded files were corrupted before this crate was built.
pub fn embedded() -> Result<VectorSet, LoadError> {
    VectorSet::from_releases(&EMBEDDED)
}

/// The embedded, frozen v1 vector set (labelled `vectors/v1/<file>` in messages).
///
/// # Errors
/// Only if the embedded files were corrupted before this crate was built.
pub fn v1() -> Result<VectorSet, LoadError> {
    VectorSet::from_texts("vectors/v1", &V1_FILES)
}
