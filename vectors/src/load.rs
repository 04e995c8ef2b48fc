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

/// `manifest.json`, decoded.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// Where it came from, for messages.
    pub path: String,
    /// The exact file text.
    pub text: String,
    /// The parsed document (for schema validation).
    pub json: serde_json::Value,
    /// `vectors_version`.
    pub vectors_version: u32,
    /// One entry per family file, sorted by path.
    pub files: Vec<ManifestEntry>,
    /// SHA-256 of the `sha256sum`-style listing of `files`.
    pub root_sha256: String,
}

/// All nine family files plus the manifest.
#[derive(Debug, Clone)]
pub struct VectorSet {
    /// Family files in [`Family::ALL`] order.
    pub files: Vec<VectorFile>,
    /// The manifest.
    pub manifest: Manifest,
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
    vectors_version: u32,
    files: Vec<ManifestEntry>,
    root_sha256: String,
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
            });
        }
        Ok(Self {
            family,
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
    /// Decode `manifest.json`.
    ///
    /// # Errors
    /// [`LoadError`] naming the file.
    pub fn parse(file: &str, text: &str) -> Result<Self, LoadError> {
        let json: serde_json::Value = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
        let raw =
            RawManifest::deserialize(&json).map_err(|e| envelope(file, "$", e.to_string()))?;
        if raw.format != "awa-conformance-manifest" || raw.format_version != 1 {
            return Err(envelope(
                file,
                "format",
                "not an awa-conformance-manifest of format_version 1",
            ));
        }
        Ok(Self {
            path: file.to_owned(),
            text: text.to_owned(),
            json,
            vectors_version: raw.vectors_version,
            files: raw.files,
            root_sha256: raw.root_sha256,
        })
    }
}

impl VectorSet {
    /// Decode a set from `(file name, text)` pairs: the nine `<family>.json` files and
    /// `manifest.json`. `dir` prefixes file names in messages.
    ///
    /// # Errors
    /// A missing or undecodable file.
    pub fn from_texts(dir: &str, texts: &[(&str, &str)]) -> Result<Self, LoadError> {
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
        let files = Family::ALL
            .iter()
            .map(|f| {
                let name = f.file_name();
                VectorFile::parse(&label(&name), Some(*f), find(&name)?)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let manifest = Manifest::parse(&label("manifest.json"), find("manifest.json")?)?;
        Ok(Self { files, manifest })
    }

    /// Load the nine family files and `manifest.json` from a directory.
    ///
    /// # Errors
    /// A missing, unreadable or undecodable file.
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Self, LoadError> {
        let dir = dir.as_ref();
        let names: Vec<String> = Family::ALL
            .iter()
            .map(|f| f.file_name())
            .chain(std::iter::once("manifest.json".to_owned()))
            .collect();
        let mut texts = Vec::with_capacity(names.len());
        for name in &names {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p).map_err(|source| LoadError::Io {
                file: p.display().to_string(),
                source,
            })?;
            texts.push((name.as_str(), text));
        }
        let borrowed: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
        Self::from_texts(&dir.display().to_string(), &borrowed)
    }

    /// The file of one family.
    #[must_use]
    pub fn file(&self, family: Family) -> Option<&VectorFile> {
        self.files.iter().find(|f| f.family == family)
    }

    /// Every vector with its family, in file order.
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

/// The embedded, frozen v1 vector set (labelled `vectors/v1/<file>` in messages).
///
/// # Errors
/// Only if the embedded files were corrupted before this crate was built.
pub fn v1() -> Result<VectorSet, LoadError> {
    VectorSet::from_texts("vectors/v1", &V1_FILES)
}
