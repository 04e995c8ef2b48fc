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

/// A key's hex text, decoded and within the core's length limit (an accepted input's key).
pub(crate) fn valid_key(hex_text: &str, path: &str) -> FResult<Vec<u8>> {
    let key = hex_bytes(hex_text, path)?;
    check_core(core::validate_key(&key), path)?;
    Ok(key)
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
fn shards(v: Vec<u8>, path: &str) -> FResult<Vec<u8>> {
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

/// The `input` of a one-key family: `{"key_hex": "<hex>"}`.
pub(crate) fn key_input(k: &[u8]) -> Json {
    Json::obj([key_hex(k)])
}

/// The members of a one-key family's vector: the valid key of `input` (`{"key_hex"}`), then
/// `intermediate` as `M` and `expected` as `E`. The three members' shapes are checked before
/// the key's hex and length, so the first error named is the same whatever the family.
pub(crate) fn key_parts<M, E>(
    input: Option<&serde_json::Value>,
    intermediate: Option<&serde_json::Value>,
    expected: Option<&serde_json::Value>,
) -> FResult<(Vec<u8>, M, E)>
where
    M: for<'de> Deserialize<'de>,
    E: for<'de> Deserialize<'de>,
{
    let inp: KeyIn = serde_part(input, "input")?;
    let mid: M = serde_part(intermediate, "intermediate")?;
    let ex: E = serde_part(expected, "expected")?;
    Ok((valid_key(&inp.key_hex, "input.key_hex")?, mid, ex))
}

/// `("key_hex", "<hex>")`.
pub(crate) fn key_hex(k: &[u8]) -> (&'static str, Json) {
    ("key_hex", Json::Str(hex::encode(k)))
}

/// A u64 as a decimal string.
pub(crate) fn dec(u: u64) -> Json {
    Json::Str(u.to_string())
}

/// The `expected` of a family with a shard per width: `{"shards": [..]}`.
pub(crate) fn shards_expected(s: &[u8]) -> Json {
    Json::obj([(
        "shards",
        Json::Arr(s.iter().map(|&x| Json::Int(i64::from(x))).collect()),
    )])
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyIn {
    key_hex: String,
}

/// The `expected` of a family with a shard per width, as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ShardsEx {
    shards: Vec<u8>,
}

impl ShardsEx {
    /// The shards, one per width 1..=64.
    pub(crate) fn shards(self) -> FResult<Vec<u8>> {
        shards(self.shards, "expected.shards")
    }
}

#[cfg(test)]
mod tests {
    use awa_conformance_core::MAX_KEY_LEN;
    use serde_json::json;

    use super::{key_parts, valid_key, FResult, FieldError, ShardsEx};
    use crate::hex;

    #[test]
    fn valid_key_refuses_bad_hex_and_over_long_keys_at_their_path() {
        let max = hex::encode(&vec![0x61; MAX_KEY_LEN]);
        assert_eq!(valid_key(&max, "p").map(|k| k.len()), Ok(MAX_KEY_LEN));
        let long = hex::encode(&vec![0x61; MAX_KEY_LEN + 1]);
        assert_eq!(
            valid_key(&long, "input.key_hex").map_err(|e| e.path),
            Err("input.key_hex".to_owned())
        );
        assert_eq!(valid_key("6", "p").map_err(|e| e.path), Err("p".to_owned()));
        assert_eq!(valid_key("", "p"), Ok(vec![]));
    }

    #[test]
    fn key_parts_checks_every_member_shape_before_the_key() {
        let shards = json!({"shards": vec![0; 64]});
        let parts = |input: serde_json::Value, expected: &serde_json::Value| {
            key_parts::<ShardsEx, ShardsEx>(Some(&input), Some(&shards), Some(expected))
                .map(|(key, _, ex)| (key, ex.shards().map(|s| s.len())))
        };
        let path = |r: FResult<_>| r.map_err(|e: FieldError| e.path);
        // A bad key and a bad `expected`: the member's shape is named first.
        let bad_ex = json!({"shards": "no"});
        assert_eq!(
            path(parts(json!({"key_hex": "zz"}), &bad_ex)),
            Err("expected".into())
        );
        assert_eq!(
            path(parts(json!({"key_hex": "zz"}), &shards)),
            Err("input.key_hex".into())
        );
        let extra = json!({"key_hex": "61", "x": 1});
        assert_eq!(path(parts(extra, &shards)), Err("input".into()));
        let ok = parts(json!({"key_hex": "6162"}), &shards);
        assert_eq!(ok, Ok((b"ab".to_vec(), Ok(64))));
    }
}
