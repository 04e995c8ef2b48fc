//! Rejected-input vectors (v1.1 on): inputs the contract refuses, each with the stable error
//! code a producer must answer. The verdict comes from running the reference core on the input.

use awa_conformance_core as core;
use serde::Deserialize;

use crate::model::FieldError;
use crate::typed::from_typed;
use crate::{hex, Family};

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

fn ferr(path: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        path: path.to_owned(),
        message: message.into(),
    }
}

fn decode<T: for<'de> Deserialize<'de>>(input: &serde_json::Value) -> Result<T, FieldError> {
    T::deserialize(input).map_err(|e| ferr("input", e.to_string()))
}

fn key(hex_text: Option<&str>, path: &str) -> Result<Option<Vec<u8>>, FieldError> {
    hex_text
        .map(|h| hex::decode(h).ok_or_else(|| ferr(path, "not lowercase hex of whole bytes")))
        .transpose()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CjIn {
    value: serde_json::Value,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UkIn {
    kind: String,
    queue: Option<String>,
    args: Option<serde_json::Value>,
    period_bucket: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtIn {
    key_hex: String,
    // Decoded so a misspelt member is an error; routing does not depend on it.
    #[serde(rename = "logical_queue")]
    _logical_queue: String,
    partitions: i64,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpIn {
    width: i64,
    ordering_key_hex: Option<String>,
    concurrency_key_hex: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsIn {
    retained_shard: i64,
    destination_width: i64,
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
    let typed = |v: &serde_json::Value, path: &str| {
        from_typed(v, path).map_err(|t| ferr(&t.path, t.message))
    };
    let verdict: Result<(), core::Error> = match family {
        Family::CanonicalJson => {
            let i: CjIn = decode(input)?;
            core::canonical_json(&typed(&i.value, "input.value")?).map(drop)
        }
        Family::UniqueKey => {
            let i: UkIn = decode(input)?;
            let args = match &i.args {
                None | Some(serde_json::Value::Null) => None,
                Some(a) => Some(typed(a, "input.args")?),
            };
            let period = i
                .period_bucket
                .map(|p| {
                    p.parse::<i64>()
                        .map_err(|_| ferr("input.period_bucket", "not a decimal i64"))
                })
                .transpose()?;
            core::unique_key(&i.kind, i.queue.as_deref(), args.as_ref(), period).map(drop)
        }
        Family::Partition => {
            let i: PtIn = decode(input)?;
            key(Some(&i.key_hex), "input.key_hex")?;
            core::Partitions::new(i.partitions).map(drop)
        }
        Family::RoutingPrecedence => {
            let i: RpIn = decode(input)?;
            let ok = key(i.ordering_key_hex.as_deref(), "input.ordering_key_hex")?;
            let ck = key(
                i.concurrency_key_hex.as_deref(),
                "input.concurrency_key_hex",
            )?;
            core::Width::new(i.width)
                .and_then(|w| core::route(w, ok.as_deref(), ck.as_deref()))
                .map(drop)
        }
        Family::MoveShard => {
            let i: MsIn = decode(input)?;
            core::Width::new(i.destination_width)
                .and_then(|w| core::move_shard(i.retained_shard, w))
                .map(drop)
        }
        Family::OrderingShard
        | Family::ConcurrencyDigest
        | Family::ConcurrencyShard
        | Family::UniqueStates => {
            return Err(ferr(
                "expected.error",
                format!("{family} vectors have no rejected form (every input is valid)"),
            ))
        }
    };
    Ok(verdict.err().as_ref().map(error_code))
}
