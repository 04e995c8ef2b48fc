//! Shortened byte values for the places people read: the terminal, Markdown and JUnit.
//!
//! A long value (a 1 000-byte canonical JSON, a 100 kB key) drowns the one line that says
//! what differed. Values longer than [`SHOW_IN_FULL_MAX`] bytes are shown as their first and
//! last [`EDGE`] bytes, their length and their SHA-256, which is enough to tell two values
//! apart and to find the full value in the JSON report, which always keeps it whole.
//! Strings of hex digits are bytes in the vector format (ADR 0002), so they are shortened as
//! the bytes they encode; other strings as their UTF-8 bytes.

use awa_conformance_vectors::to_hex as hex;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

/// Values up to this many bytes are shown whole (a SHA-256 digest, 32 bytes, always is).
pub const SHOW_IN_FULL_MAX: usize = 64;
/// How many bytes of each end a shortened value keeps.
pub const EDGE: usize = 16;

/// `value` with every long string replaced by its shortened form (numbers, keys and
/// structure unchanged).
#[must_use]
pub fn value(value: &Json) -> Json {
    match value {
        Json::String(s) => Json::String(text(s)),
        Json::Array(items) => Json::Array(items.iter().map(self::value).collect()),
        Json::Object(map) => Json::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), self::value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `value` shortened and printed as compact JSON.
#[must_use]
pub fn display(value: &Json) -> String {
    self::value(value).to_string()
}

/// One string, shortened when long: `<first 16>…<last 16> (N bytes, sha256 <hex>)`.
#[must_use]
pub fn text(s: &str) -> String {
    if let Some(bytes) = hex_bytes(s) {
        if bytes.len() <= SHOW_IN_FULL_MAX {
            return s.to_owned();
        }
        let (head, tail) = edges(&bytes);
        return format!(
            "{}…{} ({} bytes, sha256 {})",
            hex(head),
            hex(tail),
            bytes.len(),
            sha256_hex(&bytes)
        );
    }
    let bytes = s.as_bytes();
    if bytes.len() <= SHOW_IN_FULL_MAX {
        return s.to_owned();
    }
    // Cut at character boundaries so the shown text stays valid UTF-8.
    let mut head_end = EDGE;
    while !s.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = bytes.len() - EDGE;
    while !s.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    format!(
        "{}…{} ({} bytes, sha256 {})",
        s.get(..head_end).unwrap_or(""),
        s.get(tail_start..).unwrap_or(""),
        bytes.len(),
        sha256_hex(bytes)
    )
}

/// The bytes an even-length string of hex digits encodes.
fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    if s.is_empty() || s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    s.as_bytes()
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
        })
        .collect()
}

fn edges(bytes: &[u8]) -> (&[u8], &[u8]) {
    let head = bytes.get(..EDGE).unwrap_or(bytes);
    let tail = bytes
        .get(bytes.len().saturating_sub(EDGE)..)
        .unwrap_or(bytes);
    (head, tail)
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_values_are_shown_whole() {
        let digest = "ab".repeat(32);
        assert_eq!(text(&digest), digest);
        assert_eq!(text("unique_key"), "unique_key");
        let v = json!({"shards": [1, 2, 3], "d": digest});
        assert_eq!(value(&v), v);
    }

    #[test]
    fn long_hex_keeps_edges_length_and_sha256_of_the_bytes() {
        let bytes: Vec<u8> = (0..=255u8).collect();
        let s = hex(&bytes);
        let short = text(&s);
        assert_eq!(
            short,
            format!(
                "000102030405060708090a0b0c0d0e0f…f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff (256 bytes, \
                 sha256 {})",
                sha256_hex(&bytes)
            )
        );
        // Two values that differ only in the middle stay distinguishable.
        let mut other = bytes.clone();
        if let Some(b) = other.get_mut(100) {
            *b ^= 1;
        }
        assert_ne!(text(&hex(&other)), short);
    }

    #[test]
    fn long_text_is_cut_at_character_boundaries() {
        let s = format!("{}{}", "é".repeat(40), "x".repeat(10));
        let short = text(&s);
        assert!(short.starts_with("éééééééé…"), "{short}");
        assert!(
            short.contains(&format!("({} bytes, sha256 ", s.len())),
            "{short}"
        );
        let nested = value(&json!({"a": [s]}));
        assert_eq!(nested["a"][0], Json::String(short));
    }
}
