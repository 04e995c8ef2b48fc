//! The frozen v1 vectors of Awa's SQL producer contract: embedded files, a typed loader, the
//! generator that wrote them, and the checks a runner needs (recompute with the core, content
//! IDs, manifest hashes, JSON Schema).
//!
//! Format: `docs/adr/0002-vector-format.md`. Public API summary: `vectors/API.md`.

mod check;
mod family;
mod generate;
pub mod hex;
mod load;
mod model;
mod pretty;
mod typed;

pub use check::{
    check_ids, check_integrity, check_manifest, check_schema, check_vector, compare, content_id,
    root_sha256, sha256_hex, IntegrityError, Mismatch, MANIFEST_SCHEMA, VECTOR_FILE_SCHEMA,
};
pub use family::Family;
pub use generate::{
    diff_files, render_file, render_manifest, render_v1, v1_vectors, FileDiff, GenerateError,
};
pub use load::{v1, LoadError, Manifest, ManifestEntry, VectorFile, VectorSet, V1_FILES};
pub use model::{
    CanonicalJsonCase, Case, ConcurrencyDigestCase, ConcurrencyShardCase, MoveShardCase,
    OrderingShardCase, PartitionCase, RoutingPrecedenceCase, Status, UniqueKeyCase,
    UniqueStatesCase, Vector,
};
pub use pretty::{render, Json};
pub use typed::to_typed;

/// Parse a typed JSON value (ADR 0002 "Typed JSON values") into a core value.
///
/// # Errors
/// A message naming the JSON path below `path` and what is wrong.
pub fn from_typed(
    json: &serde_json::Value,
    path: &str,
) -> Result<awa_conformance_core::Value, String> {
    typed::from_typed(json, path).map_err(|e| format!("{}: {}", e.path, e.message))
}
