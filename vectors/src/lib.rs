//! The frozen vectors of Awa's SQL producer contract (release v1 and the additive v1.1):
//! embedded files, a typed loader, errata, and the checks a consumer needs (recompute with the
//! core, content IDs, manifest hashes). The generator, the file pretty-printer and JSON Schema
//! validation are behind the `maintainer` feature, which the runner enables.
//!
//! Format: `docs/adr/0002-vector-format.md`; releases and errata: `docs/adr/0020-vector-releases-and-errata.md`; one module per family:
//! `docs/adr/0043-one-module-per-family.md`.
//! Public API summary: `vectors/API.md`.

mod check;
mod family;
#[cfg(feature = "maintainer")]
mod generate;
mod hex;
mod load;
mod model;
mod pretty;
mod reject;
mod typed;
mod wire;

#[cfg(feature = "maintainer")]
pub use check::check_schema;
pub use check::{
    check_errata, check_ids, check_integrity, check_manifest, check_vector, compare, content_id,
    IntegrityError, Mismatch,
};
pub use family::canonical_json::CanonicalJsonCase;
pub use family::concurrency_digest::ConcurrencyDigestCase;
pub use family::concurrency_shard::ConcurrencyShardCase;
pub use family::move_shard::MoveShardCase;
pub use family::ordering_shard::OrderingShardCase;
pub use family::partition::PartitionCase;
pub use family::routing_precedence::RoutingPrecedenceCase;
pub use family::unique_key::UniqueKeyCase;
pub use family::unique_states::UniqueStatesCase;
pub use family::Family;
#[cfg(feature = "maintainer")]
pub use generate::{
    diff_files, render_all, render_manifest, FileDiff, GenerateError, RenderedRelease,
};
pub use hex::{decode as from_hex, encode as to_hex};
pub use load::{
    embedded, v1, Errata, ErrataEntry, Erratum, LoadError, Manifest, ManifestEntry, Pin,
    VectorFile, VectorSet, EMBEDDED, V1_1_FILES, V1_FILES,
};
pub use model::{Case, RejectedCase, Status, Vector};
#[cfg(feature = "maintainer")]
pub use pretty::render;
pub use pretty::Json;
pub use reject::{error_code, ERROR_CODES};

/// Decode one value in the vector files' typed form (ADR 0002, plus ADR 0020's `nested`)
/// into a core value, as the producer protocol sends args and metadata.
///
/// # Errors
/// A message naming the JSON path under `path` and what is wrong there.
pub fn decode_typed(
    typed: &serde_json::Value,
    path: &str,
) -> Result<awa_conformance_core::Value, String> {
    typed::from_typed(typed, path).map_err(|e| format!("{}: {}", e.path, e.message))
}
