//! Decoding helpers shared by the family modules: field errors with their JSON path, hex,
//! canonical decimals, shard arrays and the core's width.

use awa_conformance_core as core;
use awa_conformance_core::Width;
use serde::Deserialize;

use crate::hex;
use crate::pretty::Json;

/// A field that does not decode: its JSON path inside the vector and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) path: String,
    pub(crate) message: String,
}

impl FieldError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

pub(crate) type FResult<T> = Result<T, FieldError>;

pub(crate) fn ferr(path: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError::new(path, message)
}

/// Deserialize a required member (`path` names it in the error).
pub(crate) fn serde_part<T: for<'de> Deserialize<'de>>(
    v: Option<&serde_json::Value>,
    path: &str,
) -> FResult<T> {
    let v = v.ok_or_else(|| ferr(path, format!("missing member \"{path}\"")))?;
    T::deserialize(v).map_err(|e| ferr(path, e.to_string()))
}

/// Deserialize a rejected-input vector's whole `input`.
pub(crate) fn decode_input<T: for<'de> Deserialize<'de>>(input: &serde_json::Value) -> FResult<T> {
    T::deserialize(input).map_err(|e| ferr("input", e.to_string()))
}

pub(crate) fn hex_bytes(s: &str, path: &str) -> FResult<Vec<u8>> {
    hex::decode(s).ok_or_else(|| {
        ferr(
            path,
            format!("{s:.40?} is not lowercase hex of whole bytes"),
        )
    })
}

pub(crate) fn hex_array<const N: usize>(s: &str, path: &str) -> FResult<[u8; N]> {
    let v = hex_bytes(s, path)?;
    <[u8; N]>::try_from(v.as_slice()).map_err(|_| {
        ferr(
            path,
            format!("expected {} hex digits, found {}", N * 2, s.len()),
        )
    })
}

/// An optional key of a rejected-input vector (its length is the core's to judge).
pub(crate) fn opt_key(hex_text: Option<&str>, path: &str) -> FResult<Option<Vec<u8>>> {
    hex_text
        .map(|h| hex::decode(h).ok_or_else(|| ferr(path, "not lowercase hex of whole bytes")))
        .transpose()
}

pub(crate) fn decimal<T: std::str::FromStr + ToString>(s: &str, path: &str) -> FResult<T> {
    s.parse::<T>()
        .ok()
        .filter(|v| v.to_string() == s)
        .ok_or_else(|| {
            ferr(
                path,
                format!("{s:?} is not a canonical decimal of the required integer type"),
            )
        })
}

/// A `shards` array: exactly one shard per width 1..=64.
pub(crate) fn shards(v: Vec<u8>, path: &str) -> FResult<Vec<u8>> {
    if v.len() == usize::from(core::MAX_WIDTH) {
        Ok(v)
    } else {
        Err(ferr(
            path,
            format!("expected 64 shards (widths 1..=64), found {}", v.len()),
        ))
    }
}

pub(crate) fn check_core<T>(r: Result<T, core::Error>, path: &str) -> FResult<T> {
    r.map_err(|e| ferr(path, e.to_string()))
}

pub(crate) fn width(n: u8) -> Result<Width, core::Error> {
    Width::new(i64::from(n))
}

/// `f(width)` at every width 1..=64.
pub(crate) fn shards_at_every_width(f: impl Fn(Width) -> u8) -> Result<Vec<u8>, core::Error> {
    (1..=core::MAX_WIDTH).map(|w| width(w).map(&f)).collect()
}

/// `("key_hex", "<hex>")`.
pub(crate) fn key_hex(k: &[u8]) -> (&'static str, Json) {
    ("key_hex", Json::Str(hex::encode(k)))
}

/// A u64 as a decimal string.
pub(crate) fn dec(u: u64) -> Json {
    Json::Str(u.to_string())
}

/// A `shards` array.
pub(crate) fn shards_json(s: &[u8]) -> Json {
    Json::Arr(s.iter().map(|&x| Json::Int(i64::from(x))).collect())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KeyIn {
    pub(crate) key_hex: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardsEx {
    pub(crate) shards: Vec<u8>,
}
