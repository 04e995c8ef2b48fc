//! Inputs shared by several families' generator cases: patterned keys, the edge-key list, the
//! SHA-256 padding-boundary keys, and small builders of typed values.

use awa_conformance_core as core;
use awa_conformance_core::Value;

use crate::generate::{spec, Spec};
use crate::model::Case;

pub(crate) fn patterned(len: usize, mul: usize, add: usize) -> Vec<u8> {
    // `% 256` keeps the value in u8 range; the pattern just has to be fixed and non-constant.
    (0..len).map(|i| ((i * mul + add) % 256) as u8).collect()
}

/// Edge and ordinary keys for the key-hashing families: (bytes, description, tags).
pub(crate) fn keys(pow2_tags: bool) -> Vec<(Vec<u8>, String, Vec<&'static str>)> {
    let c00 = if pow2_tags {
        vec!["collision:pow2-00-80", "edge:one-byte"]
    } else {
        vec!["edge:one-byte"]
    };
    let c7f = if pow2_tags {
        vec!["collision:pow2-7f-ff", "edge:one-byte"]
    } else {
        vec!["edge:one-byte"]
    };
    vec![
        (
            vec![],
            "the empty key (a key, distinct from absent)".into(),
            vec!["edge:empty"],
        ),
        (
            b"a".to_vec(),
            "one byte \"a\"".into(),
            vec!["edge:one-byte"],
        ),
        (vec![0x00], "one byte 0x00".into(), c00.clone()),
        (
            vec![0x80],
            "one byte 0x80 (equals 0x00 at power-of-two widths for the ordering hash)".into(),
            c00,
        ),
        (vec![0x7f], "one byte 0x7f".into(), c7f.clone()),
        (
            vec![0xff],
            "one byte 0xff (equals 0x7f at power-of-two widths for the ordering hash)".into(),
            c7f,
        ),
        (
            "é".as_bytes().to_vec(),
            "UTF-8 \"é\" (2 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            "日本".as_bytes().to_vec(),
            "UTF-8 \"日本\" (6 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            "🦀".as_bytes().to_vec(),
            "UTF-8 astral \"🦀\" (4 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            b"abcdefg".to_vec(),
            "7 bytes (one short of an 8-byte block)".into(),
            vec!["edge:block"],
        ),
        (
            b"abcdefgh".to_vec(),
            "8 bytes (exactly one 8-byte block)".into(),
            vec!["edge:block"],
        ),
        (
            b"abcdefghi".to_vec(),
            "9 bytes (one block plus one byte)".into(),
            vec!["edge:block"],
        ),
        (
            patterned(1024, 31, 7),
            "1 KiB patterned key ((i*31+7) mod 256)".into(),
            vec!["edge:1kib"],
        ),
        (
            patterned(4096, 7, 3),
            "4096-byte patterned key ((i*7+3) mod 256), the longest key".into(),
            vec!["edge:max-key"],
        ),
        (b"order-1".to_vec(), "text \"order-1\"".into(), vec!["text"]),
        (
            b"customer:42".to_vec(),
            "text \"customer:42\"".into(),
            vec!["text"],
        ),
        (
            b"tenant-42".to_vec(),
            "text \"tenant-42\"".into(),
            vec!["text"],
        ),
        (
            b"user@example.com".to_vec(),
            "text \"user@example.com\"".into(),
            vec!["text"],
        ),
        (
            b"AAAAAAAA".to_vec(),
            "text \"AAAAAAAA\"".into(),
            vec!["text"],
        ),
        (
            b"\x00\x01\x02\x03\xfd\xfe\xff".to_vec(),
            "binary bytes 00 01 02 03 fd fe ff".into(),
            vec!["binary"],
        ),
    ]
}

/// The v1 key families' cases: every edge key of [`keys`] through `make`.
pub(crate) fn key_specs(
    tags_pow2: bool,
    make: fn(&[u8]) -> Result<Case, core::Error>,
) -> Vec<Spec> {
    keys(tags_pow2)
        .into_iter()
        .map(|(k, d, t)| spec(d, &t, make(&k)))
        .collect()
}

/// The SHA-256 domain tag's length: a key of `n` bytes gives a pre-image of `23 + n`.
const TAG_LEN: usize = core::CONCURRENCY_DOMAIN_TAG.len();

/// Key lengths around SHA-256's padding boundaries: (key length, why).
const SHA_KEYS: [(usize, &str); 10] = [
    (32, "the last length whose padding fits the first block"),
    (
        33,
        "the first length that needs a second block for the padding",
    ),
    (40, "one byte short of a full block"),
    (41, "exactly one 64-byte block"),
    (42, "one block plus one byte"),
    (96, "the last length whose padding fits the second block"),
    (97, "the first length that needs a third block"),
    (104, "one byte short of two full blocks"),
    (105, "exactly two 64-byte blocks"),
    (106, "two blocks plus one byte"),
];

fn sha_boundary_keys() -> Vec<(Vec<u8>, String, Vec<&'static str>)> {
    SHA_KEYS
        .iter()
        .map(|&(n, why)| {
            (
                patterned(n, 37, 11),
                format!(
                    "{n}-byte patterned key ((i*37+11) mod 256): SHA-256 pre-image of {} bytes, {why}",
                    n + TAG_LEN
                ),
                vec!["edge:sha256-padding"],
            )
        })
        .collect()
}

/// The v1.1 key families' cases: every SHA-256 boundary key through `make`.
pub(crate) fn sha_boundary_specs(make: fn(&[u8]) -> Result<Case, core::Error>) -> Vec<Spec> {
    sha_boundary_keys()
        .into_iter()
        .map(|(k, d, t)| spec(d, &t, make(&k)))
        .collect()
}

/// A printable ASCII string of `n` characters that is not a repetition of one letter.
pub(crate) fn text(n: usize, seed: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| {
            char::from(
                ALPHABET
                    .get((i * 7 + seed) % ALPHABET.len())
                    .copied()
                    .unwrap_or(b'a'),
            )
        })
        .collect()
}

pub(crate) fn nested_arrays(depth: usize) -> Value {
    let mut v = Value::Int(0);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

pub(crate) fn nested_objects(depth: usize) -> Value {
    let mut v = Value::Bool(true);
    for _ in 0..depth {
        v = Value::Object(vec![("a".to_owned(), v)]);
    }
    v
}

pub(crate) fn s(x: &str) -> Value {
    Value::String(x.to_owned())
}
pub(crate) fn f(x: f64) -> Value {
    Value::Float(x)
}
pub(crate) fn obj(members: &[(&str, Value)]) -> Value {
    Value::Object(
        members
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}
pub(crate) fn arr(items: &[Value]) -> Value {
    Value::Array(items.to_vec())
}
