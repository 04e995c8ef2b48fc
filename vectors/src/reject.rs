//! Rejected-input vectors (v1.1 on): inputs the contract refuses, each with the stable error
//! code a producer must answer. The verdict comes from running the reference core on the input
//! (each family module's `FamilyDef::attempt` decodes the input and calls the core).

use awa_conformance_core as core;

use crate::family::{with_def, FamilyDef};
use crate::wire::FieldError;
use crate::Family;

/// Every error code a rejected-input vector may expect (`expected.error`), one per core error.
/// The SQL codes `invalid_width` and `key_too_long` are the same words (docs/contract.md §10).
pub const ERROR_CODES: [&str; 5] = [
    "invalid_width",
    "key_too_long",
    "too_deep",
    "invalid_partitions",
    "invalid_shard",
];

/// The stable code of a core error (`"error"` for one this crate does not know yet).
#[must_use]
pub fn error_code(e: &core::Error) -> &'static str {
    match e {
        core::Error::InvalidWidth(_) => "invalid_width",
        core::Error::KeyTooLong { .. } => "key_too_long",
        core::Error::TooDeep { .. } => "too_deep",
        core::Error::InvalidPartitions(_) => "invalid_partitions",
        core::Error::InvalidShard(_) => "invalid_shard",
        _ => "error",
    }
}

/// A family's answer for the core's verdict on a rejected-input vector's input: the code of
/// the refusal, or `None` when the core accepts the input.
pub(crate) fn refusal<T>(verdict: Result<T, core::Error>) -> Option<&'static str> {
    verdict.err().as_ref().map(error_code)
}

/// Decode `input` as `family`'s input (integers unconstrained) and run the core on it:
/// `Ok(Some(code))` when the core refuses it, `Ok(None)` when it accepts it.
///
/// # Errors
/// The input does not decode, or `family` has no rejected form.
pub(crate) fn attempt(
    family: Family,
    input: &serde_json::Value,
) -> Result<Option<&'static str>, FieldError> {
    with_def!(family, D => <D as FamilyDef>::attempt(input))
}
