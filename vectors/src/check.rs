//! Verification: recompute each vector with the core, content-hash IDs, the manifest and the
//! JSON Schemas. Every check here fails on a wrong implementation or an edited file.

use std::collections::HashMap;
use std::fmt;
#[cfg(feature = "maintainer")]
use std::sync::OnceLock;

use awa_conformance_core as core;
use sha2::{Digest, Sha256};

use crate::model::{Case, Vector};
use crate::pretty::Json;
use crate::{hex, Family, VectorSet};

/// A vector whose stored field differs from what was computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("vector {vector_id}: {field}: expected {expected}, got {actual}")]
pub struct Mismatch {
    /// The vector's ID.
    pub vector_id: String,
    /// Dotted path of the field (`expected.shards[6]`, `intermediate.preimage_hex`).
    pub field: String,
    /// The stored (expected) value, as JSON text.
    pub expected: String,
    /// The computed value, as JSON text (or the error the computation raised).
    pub actual: String,
}

/// Recompute every intermediate and expected field of `vector` with the reference core and
/// compare them with the stored ones.
///
/// # Errors
/// The first differing field (document order), or a family/case mismatch.
pub fn check_vector(family: Family, vector: &Vector) -> Result<(), Mismatch> {
    if vector.case.family() != family {
        return Err(Mismatch {
            vector_id: vector.id.clone(),
            field: "family".to_owned(),
            expected: family.to_string(),
            actual: vector.case.family().to_string(),
        });
    }
    let computed = vector.case.recompute().map_err(|e| Mismatch {
        vector_id: vector.id.clone(),
        field: "input".to_owned(),
        expected: "an input the core accepts".to_owned(),
        actual: format!("core error: {e}"),
    })?;
    compare(vector, &computed)
}

/// Compare a vector's stored intermediate and expected fields with `actual` (a case computed by
/// any implementation, e.g. a producer under test). Inputs are not compared.
///
/// # Errors
/// The first differing field.
pub fn compare(vector: &Vector, actual: &Case) -> Result<(), Mismatch> {
    let id = vector.id.as_str();
    let stored = &vector.case;
    match (stored.intermediate_json(), actual.intermediate_json()) {
        (Some(s), Some(a)) => diff(id, "intermediate", &s, &a)?,
        (None, None) => {}
        (s, a) => diff(
            id,
            "intermediate",
            &s.unwrap_or(Json::Null),
            &a.unwrap_or(Json::Null),
        )?,
    }
    diff(
        id,
        "expected",
        &stored.expected_json(),
        &actual.expected_json(),
    )
}

fn leaf(j: &Json) -> String {
    j.to_serde().to_string()
}

fn diff(id: &str, path: &str, want: &Json, got: &Json) -> Result<(), Mismatch> {
    let mismatch = || Mismatch {
        vector_id: id.to_owned(),
        field: path.to_owned(),
        expected: leaf(want),
        actual: leaf(got),
    };
    match (want, got) {
        (Json::Obj(w), Json::Obj(g))
            if w.len() == g.len() && w.iter().zip(g).all(|(a, b)| a.0 == b.0) =>
        {
            for ((k, wv), (_, gv)) in w.iter().zip(g) {
                diff(id, &format!("{path}.{k}"), wv, gv)?;
            }
            Ok(())
        }
        (Json::Arr(w), Json::Arr(g)) if w.len() == g.len() => {
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                diff(id, &format!("{path}[{i}]"), wv, gv)?;
            }
            Ok(())
        }
        _ if want == got => Ok(()),
        _ => Err(mismatch()),
    }
}

/// The ADR 0001 D8 ID of a vector with these `input` and `expected` members:
/// `<prefix>-<first 12 hex of SHA-256(family || 0x00 || canonical({"expected", "input"}))>`.
///
/// # Errors
/// [`core::Error::TooDeep`] for absurdly nested members.
pub fn content_id(
    family: Family,
    input: &serde_json::Value,
    expected: &serde_json::Value,
) -> Result<String, core::Error> {
    let doc = core::Value::Object(vec![
        ("expected".to_owned(), serde_to_value(expected)),
        ("input".to_owned(), serde_to_value(input)),
    ]);
    id_of(family, &doc)
}

/// [`content_id`] for a generated vector's JSON members.
#[cfg(feature = "maintainer")]
pub(crate) fn content_id_json(
    family: Family,
    input: &Json,
    expected: &Json,
) -> Result<String, core::Error> {
    let doc = core::Value::Object(vec![
        ("expected".to_owned(), expected.to_value()),
        ("input".to_owned(), input.to_value()),
    ]);
    id_of(family, &doc)
}

fn id_of(family: Family, doc: &core::Value) -> Result<String, core::Error> {
    let mut h = Sha256::new();
    h.update(family.as_str().as_bytes());
    h.update([0u8]);
    h.update(core::canonical_json(doc)?);
    let digest = hex::encode(&h.finalize());
    Ok(format!(
        "{}-{}",
        family.prefix(),
        digest.get(..12).unwrap_or_default()
    ))
}

fn serde_to_value(v: &serde_json::Value) -> core::Value {
    match v {
        serde_json::Value::Null => core::Value::Null,
        serde_json::Value::Bool(b) => core::Value::Bool(*b),
        serde_json::Value::Number(n) => n
            .as_i64()
            .map(core::Value::Int)
            .or_else(|| n.as_u64().map(core::Value::UInt))
            .unwrap_or_else(|| core::Value::Float(n.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) => core::Value::String(s.clone()),
        serde_json::Value::Array(a) => core::Value::Array(a.iter().map(serde_to_value).collect()),
        serde_json::Value::Object(o) => core::Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), serde_to_value(v)))
                .collect(),
        ),
    }
}

/// A set-level integrity failure: IDs, manifest or schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntegrityError {
    /// An ID that is not `<prefix>-<12 lowercase hex>` for its family.
    #[error("{file}: vector {id}: the ID must be \"{prefix}-\" then 12 lowercase hex digits; regenerate with `awa-conformance vectors regenerate`")]
    BadId {
        /// The file.
        file: String,
        /// The ID.
        id: String,
        /// The family's prefix.
        prefix: String,
    },
    /// An ID that does not match its vector's content (the vector was edited).
    #[error("{file}: vector {id}: content hashes to {computed}: the vector was edited after publication; restore it from git (frozen vectors are never edited, only superseded under a new ID with the old one in `retired`)")]
    IdMismatch {
        /// The file.
        file: String,
        /// The stored ID.
        id: String,
        /// The ID its content hashes to.
        computed: String,
    },
    /// The same ID twice in the set.
    #[error(
        "{file}: vector {id}: duplicate ID (also in {first_file}); each vector must appear once"
    )]
    DuplicateId {
        /// The file of the second occurrence.
        file: String,
        /// The ID.
        id: String,
        /// The file of the first occurrence.
        first_file: String,
    },
    /// A live vector reuses a retired ID.
    #[error("{file}: vector {id}: the ID is listed in `retired` ({retired_in}); retired IDs are never reused")]
    RetiredId {
        /// The file.
        file: String,
        /// The ID.
        id: String,
        /// The file whose `retired` lists it.
        retired_in: String,
    },
    /// The manifest disagrees with the files.
    #[error("{file}: {message}; restore the files from git (frozen files are never edited), or regenerate the manifest when publishing a new set")]
    Manifest {
        /// The file the disagreement is about.
        file: String,
        /// What differs.
        message: String,
    },
    /// An erratum names no vector of an earlier release.
    #[error("{file}: erratum for {id}: no vector of an earlier release has this ID; an erratum corrects an existing frozen vector: fix the ID")]
    Erratum {
        /// The errata file.
        file: String,
        /// The ID it names.
        id: String,
    },
    /// A file does not validate against its JSON Schema.
    #[error("{file}: {path}: {message} (JSON Schema {schema}); restore the file from git or regenerate with `awa-conformance vectors regenerate`")]
    Schema {
        /// The file.
        file: String,
        /// JSON pointer of the offending instance.
        path: String,
        /// The validator's message.
        message: String,
        /// Which schema (`vectors/vector-file.schema.json` or `vectors/manifest.schema.json`).
        schema: String,
    },
}

/// Check every ID: well-formed, equal to its content hash, unique across the set, not retired.
///
/// # Errors
/// The first failing vector.
pub fn check_ids(set: &VectorSet) -> Result<(), IntegrityError> {
    let mut retired: HashMap<&str, &str> = HashMap::new();
    for f in &set.files {
        for r in &f.retired {
            retired.insert(r.as_str(), f.path.as_str());
        }
    }
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for f in &set.files {
        let raw = f.json.get("vectors").and_then(serde_json::Value::as_array);
        for (i, v) in f.vectors.iter().enumerate() {
            let prefix = f.family.prefix();
            let well_formed = v.id.len() == prefix.len() + 13
                && v.id.starts_with(prefix)
                && v.id.get(prefix.len()..prefix.len() + 1) == Some("-")
                && v.id
                    .bytes()
                    .skip(prefix.len() + 1)
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
            if !well_formed {
                return Err(IntegrityError::BadId {
                    file: f.path.clone(),
                    id: v.id.clone(),
                    prefix: prefix.to_owned(),
                });
            }
            let rv = raw.and_then(|a| a.get(i));
            let member = |k: &str| {
                rv.and_then(|r| r.get(k))
                    .cloned()
                    .unwrap_or(serde_json::Value::Null)
            };
            let computed = content_id(f.family, &member("input"), &member("expected"))
                .unwrap_or_else(|e| format!("(unhashable: {e})"));
            if computed != v.id {
                return Err(IntegrityError::IdMismatch {
                    file: f.path.clone(),
                    id: v.id.clone(),
                    computed,
                });
            }
            if let Some(first) = seen.insert(v.id.as_str(), f.path.as_str()) {
                return Err(IntegrityError::DuplicateId {
                    file: f.path.clone(),
                    id: v.id.clone(),
                    first_file: first.to_owned(),
                });
            }
            if let Some(r) = retired.get(v.id.as_str()) {
                return Err(IntegrityError::RetiredId {
                    file: f.path.clone(),
                    id: v.id.clone(),
                    retired_in: (*r).to_owned(),
                });
            }
        }
    }
    Ok(())
}

/// Lowercase hex SHA-256 of `bytes`.
#[must_use]
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(&Sha256::digest(bytes))
}

/// The manifest root: SHA-256 of `"<sha256>  <path>\n"` lines sorted by path (what
/// `sha256sum $(ls *.json | grep -v manifest) | sha256sum` prints).
#[must_use]
pub(crate) fn root_sha256(entries: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = entries.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let listing: String = sorted
        .iter()
        .map(|(path, sha)| format!("{sha}  {path}\n"))
        .collect();
    sha256_hex(listing.as_bytes())
}

/// Check every loaded manifest: one entry per family file of its release, sorted, each SHA-256
/// and vector count equal to the file's, the errata entry, the root hash, and that each
/// `extends` pin equals the root of the loaded release it names.
///
/// # Errors
/// The first disagreement, naming the file.
pub fn check_manifest(set: &VectorSet) -> Result<(), IntegrityError> {
    for m in set.manifests() {
        check_one_manifest(set, m)?;
    }
    Ok(())
}

fn check_one_manifest(set: &VectorSet, m: &crate::Manifest) -> Result<(), IntegrityError> {
    let merr = |file: &str, message: String| IntegrityError::Manifest {
        file: file.to_owned(),
        message,
    };
    let mut names: Vec<(String, &crate::VectorFile)> = set
        .files
        .iter()
        .filter(|f| f.release == m.vectors_version)
        .map(|f| (f.family.file_name(), f))
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let listed: Vec<&str> = m.files.iter().map(|e| e.path.as_str()).collect();
    let want: Vec<&str> = names.iter().map(|(n, _)| n.as_str()).collect();
    if listed != want {
        return Err(merr(
            &m.path,
            format!("lists {listed:?} but the release's files sorted by path are {want:?}"),
        ));
    }
    for (entry, (_, f)) in m.files.iter().zip(&names) {
        let actual = sha256_hex(f.text.as_bytes());
        if entry.sha256 != actual {
            return Err(merr(
                &f.path,
                format!(
                    "SHA-256 is {actual} but {} records {}",
                    m.path, entry.sha256
                ),
            ));
        }
        if entry.vectors != f.vectors.len() {
            return Err(merr(
                &f.path,
                format!(
                    "holds {} vectors but {} records {}",
                    f.vectors.len(),
                    m.path,
                    entry.vectors
                ),
            ));
        }
    }
    let mut pairs: Vec<(String, String)> = m
        .files
        .iter()
        .map(|e| (e.path.clone(), e.sha256.clone()))
        .collect();
    let errata = set.errata.iter().find(|e| {
        e.path.rsplit_once('/').map(|(d, _)| d) == m.path.rsplit_once('/').map(|(d, _)| d)
    });
    match (&m.errata, errata) {
        (None, None) => {}
        (Some(entry), Some(e)) => {
            let actual = sha256_hex(e.text.as_bytes());
            if entry.sha256 != actual {
                return Err(merr(
                    &e.path,
                    format!(
                        "SHA-256 is {actual} but {} records {}",
                        m.path, entry.sha256
                    ),
                ));
            }
            if entry.errata != e.entries.len() {
                return Err(merr(
                    &e.path,
                    format!(
                        "holds {} errata but {} records {}",
                        e.entries.len(),
                        m.path,
                        entry.errata
                    ),
                ));
            }
            pairs.push((entry.path.clone(), entry.sha256.clone()));
        }
        (Some(entry), None) => {
            return Err(merr(
                &m.path,
                format!("lists {} but it was not loaded", entry.path),
            ))
        }
        (None, Some(e)) => return Err(merr(&e.path, format!("is not listed in {}", m.path))),
    }
    let root = root_sha256(&pairs);
    if root != m.root_sha256 {
        return Err(merr(
            &m.path,
            format!(
                "root_sha256 is {} but the listing hashes to {root}",
                m.root_sha256
            ),
        ));
    }
    for pin in &m.extends {
        let base = set
            .manifests()
            .find(|b| b.vectors_version == pin.vectors_version)
            .ok_or_else(|| {
                merr(
                    &m.path,
                    format!(
                        "extends release {} ({}), which is not loaded",
                        pin.vectors_version, pin.path
                    ),
                )
            })?;
        if base.root_sha256 != pin.root_sha256 {
            return Err(merr(
                &base.path,
                format!(
                    "root_sha256 is {} but {} pins release {} at {}: a frozen release was edited",
                    base.root_sha256, m.path, pin.vectors_version, pin.root_sha256
                ),
            ));
        }
    }
    Ok(())
}

/// Check that every erratum names a vector of the set, in a release older than the errata
/// file's own (errata correct frozen vectors; a release's own vectors are simply written right).
///
/// # Errors
/// The first erratum naming no such vector.
pub fn check_errata(set: &VectorSet) -> Result<(), IntegrityError> {
    for file in &set.errata {
        let dir = file.path.rsplit_once('/').map_or("", |(d, _)| d);
        for e in &file.entries {
            let target = set.files.iter().find(|f| {
                f.vectors.iter().any(|v| v.id == e.id)
                    && f.path.rsplit_once('/').map_or("", |(d, _)| d) != dir
            });
            if target.is_none() {
                return Err(IntegrityError::Erratum {
                    file: file.path.clone(),
                    id: e.id.clone(),
                });
            }
        }
    }
    Ok(())
}

/// `vectors/vector-file.schema.json`, embedded.
#[cfg(feature = "maintainer")]
const VECTOR_FILE_SCHEMA: &str = include_str!("../vector-file.schema.json");
/// `vectors/manifest.schema.json`, embedded.
#[cfg(feature = "maintainer")]
const MANIFEST_SCHEMA: &str = include_str!("../manifest.schema.json");
/// `vectors/errata.schema.json`, embedded.
#[cfg(feature = "maintainer")]
const ERRATA_SCHEMA: &str = include_str!("../errata.schema.json");

#[cfg(feature = "maintainer")]
type Compiled = Result<jsonschema::Validator, String>;

#[cfg(feature = "maintainer")]
fn compile(text: &str) -> Compiled {
    let schema: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())
}

#[cfg(feature = "maintainer")]
fn validate(
    schema_name: &str,
    compiled: &'static Compiled,
    file: &str,
    doc: &serde_json::Value,
) -> Result<(), IntegrityError> {
    let serr = |path: String, message: String| IntegrityError::Schema {
        file: file.to_owned(),
        path,
        message,
        schema: schema_name.to_owned(),
    };
    let v = compiled.as_ref().map_err(|e| {
        serr(
            "(schema)".to_owned(),
            format!("the schema does not compile: {e}"),
        )
    })?;
    match v.iter_errors(doc).next() {
        None => Ok(()),
        Some(e) => Err(serr(e.instance_path().to_string(), e.to_string())),
    }
}

#[cfg(feature = "maintainer")]
/// Validate every family file against `vectors/vector-file.schema.json`, every manifest
/// against `vectors/manifest.schema.json` and every errata file against
/// `vectors/errata.schema.json`.
///
/// # Errors
/// The first file that does not validate.
pub fn check_schema(set: &VectorSet) -> Result<(), IntegrityError> {
    static FILE: OnceLock<Compiled> = OnceLock::new();
    static MANIFEST: OnceLock<Compiled> = OnceLock::new();
    let file_schema = FILE.get_or_init(|| compile(VECTOR_FILE_SCHEMA));
    for f in &set.files {
        validate(
            "vectors/vector-file.schema.json",
            file_schema,
            &f.path,
            &f.json,
        )?;
    }
    let manifest_schema = MANIFEST.get_or_init(|| compile(MANIFEST_SCHEMA));
    for m in set.manifests() {
        validate(
            "vectors/manifest.schema.json",
            manifest_schema,
            &m.path,
            &m.json,
        )?;
    }
    static ERRATA: OnceLock<Compiled> = OnceLock::new();
    let errata_schema = ERRATA.get_or_init(|| compile(ERRATA_SCHEMA));
    for e in &set.errata {
        validate(
            "vectors/errata.schema.json",
            errata_schema,
            &e.path,
            &e.json,
        )?;
    }
    Ok(())
}

/// `check_schema` (with the `maintainer` feature), [`check_manifest`], [`check_ids`] and
/// [`check_errata`], in that order.
///
/// # Errors
/// The first failure.
pub fn check_integrity(set: &VectorSet) -> Result<(), IntegrityError> {
    #[cfg(feature = "maintainer")]
    check_schema(set)?;
    check_manifest(set)?;
    check_ids(set)?;
    check_errata(set)
}

impl fmt::Display for crate::model::Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
