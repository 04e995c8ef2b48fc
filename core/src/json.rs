//! "Awa canonical JSON v1": the exact bytes released Awa hashes for `unique_key` args.
//!
//! Written here rather than delegated to serde_json so that a dependency bump, or a
//! `preserve_order` feature switched on anywhere in a build graph, cannot move a byte.

use crate::Error;

/// Maximum nesting depth of arrays and objects the encoder accepts (serde_json's parser limit,
/// so every value a JSON parser of that lineage produces fits).
pub const MAX_DEPTH: usize = 128;

/// A JSON value as a producer holds it, before canonicalisation.
///
/// Objects keep insertion order (a list of pairs) on purpose: the encoder, not the container,
/// must sort, so a test can prove that insertion order never reaches the bytes.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A signed integer, written in exact decimal.
    Int(i64),
    /// An unsigned integer, written in exact decimal (covers `i64::MAX + 1 ..= u64::MAX`).
    UInt(u64),
    /// An IEEE-754 double. NaN and ±infinity are written as `null`.
    Float(f64),
    /// A Unicode string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object as (key, value) pairs in insertion order. Duplicate keys: the last one wins.
    Object(Vec<(String, Value)>),
}

/// Encode `value` as Awa canonical JSON v1 (see `docs/contract.md` §2).
///
/// Framing: compact (no whitespace); object members sorted by the UTF-8 bytes of their keys,
/// duplicate keys resolved last-wins; strings escape `"` `\` and the C0 controls (named
/// escapes `\b \f \n \r \t`, others `\u00xx` lowercase) and write everything else raw;
/// integers in exact decimal; finite floats in the shortest round-trip digits laid out by the
/// thresholds in the contract; non-finite floats as `null`.
///
/// # Errors
/// [`Error::TooDeep`] when arrays/objects nest deeper than [`MAX_DEPTH`].
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(128);
    canonical_json_into(value, &mut out)?;
    Ok(out)
}

/// Like [`canonical_json`], appending to `out` (lets hot paths reuse one buffer).
///
/// On error `out` may hold a partial encoding; callers discard it.
///
/// # Errors
/// [`Error::TooDeep`] when arrays/objects nest deeper than [`MAX_DEPTH`].
pub fn canonical_json_into(value: &Value, out: &mut Vec<u8>) -> Result<(), Error> {
    write_value(value, out, 0)
}

fn write_value(value: &Value, out: &mut Vec<u8>, depth: usize) -> Result<(), Error> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Int(i) => write_int(*i, out),
        Value::UInt(u) => write_uint(*u, out),
        Value::Float(f) => write_float(*f, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            if depth >= MAX_DEPTH {
                return Err(Error::TooDeep { max: MAX_DEPTH });
            }
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out, depth + 1)?;
            }
            out.push(b']');
        }
        Value::Object(members) => {
            if depth >= MAX_DEPTH {
                return Err(Error::TooDeep { max: MAX_DEPTH });
            }
            out.push(b'{');
            let mut first = true;
            for (key, val) in sorted_members(members) {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_string(key, out);
                out.push(b':');
                write_value(val, out, depth + 1)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Members in UTF-8 byte order of their keys, keeping only the last of equal keys.
fn sorted_members(members: &[(String, Value)]) -> Vec<&(String, Value)> {
    let mut refs: Vec<&(String, Value)> = members.iter().collect();
    // Already-sorted input (the common case for machine-built args) costs one linear pass.
    if !refs.windows(2).all(|w| matches!(w, [a, b] if a.0.as_bytes() < b.0.as_bytes())) {
        // Stable sort keeps insertion order among equal keys, so the last of a run is the
        // last inserted: exactly serde_json's map semantics (a later insert replaces).
        refs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut dedup: Vec<&(String, Value)> = Vec::with_capacity(refs.len());
        for m in refs {
            match dedup.last_mut() {
                Some(last) if last.0 == m.0 => *last = m,
                _ => dedup.push(m),
            }
        }
        return dedup;
    }
    refs
}

fn write_int(i: i64, out: &mut Vec<u8>) {
    if i < 0 {
        out.push(b'-');
    }
    write_uint(i.unsigned_abs(), out);
}

fn write_uint(mut u: u64, out: &mut Vec<u8>) {
    // u64::MAX has 20 digits.
    let mut buf = [0u8; 20];
    let mut pos = buf.len();
    loop {
        pos -= 1;
        if let Some(slot) = buf.get_mut(pos) {
            // `u % 10` < 10, so the cast cannot truncate.
            *slot = b'0' + (u % 10) as u8;
        }
        u /= 10;
        if u == 0 || pos == 0 {
            break;
        }
    }
    out.extend_from_slice(buf.get(pos..).unwrap_or_default());
}

/// Lowercase hex digit of a nibble (`n` < 16).
fn hex_digit(n: u8) -> u8 {
    match n {
        0..=9 => b'0' + n,
        _ => b'a' + (n & 0xf) - 10,
    }
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(bytes.get(start..i).unwrap_or_default());
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(hex_digit(b >> 4));
            out.push(hex_digit(b & 0xf));
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(bytes.get(start..).unwrap_or_default());
    out.push(b'"');
}

/// Lay out a finite double from its shortest round-trip digits.
///
/// With `v = 0.d1…dL × 10^k`: `k-L >= 0 && k <= 16` → digits, zeros, `.0`;
/// `0 < k <= 16` → point inside the digits; `-5 < k <= 0` → `0.` then `-k` zeros then digits;
/// otherwise `d[.ddd]e±X` with an explicit sign and no padding.
fn write_float(f: f64, out: &mut Vec<u8>) {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return;
    }
    if f.is_sign_negative() {
        out.push(b'-');
    }
    // std's `{:e}` prints the shortest digits that round-trip (closest on ties): the same
    // digit string Ryū and zmij produce. The layout below is ours and pinned by vectors.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    let len = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let k = exp + 1;
    if k - len >= 0 && k <= 16 {
        out.extend_from_slice(&digits);
        out.extend(std::iter::repeat_n(b'0', usize::try_from(k - len).unwrap_or(0)));
        out.extend_from_slice(b".0");
    } else if 0 < k && k <= 16 {
        let (int, frac) = digits.split_at(usize::try_from(k).unwrap_or(0).min(digits.len()));
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else if -5 < k && k <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', usize::try_from(-k).unwrap_or(0)));
        out.extend_from_slice(&digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.extend_from_slice(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.push(b'e');
        out.push(if exp >= 0 { b'+' } else { b'-' });
        write_uint(u64::from(exp.unsigned_abs()), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value) -> String {
        String::from_utf8(canonical_json(v).unwrap()).unwrap()
    }

    #[test]
    fn float_layout_thresholds() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.5e21, "1.5e+21"),
            (123456789.123, "123456789.123"),
            (0.0001, "0.0001"),
            (0.00001, "0.00001"),
            (0.000015, "0.000015"),
            (1e-6, "1e-6"),
            (1.5e-7, "1.5e-7"),
            (5e-324, "5e-324"),
            (1e300, "1e+300"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (0.1, "0.1"),
            (-2.5, "-2.5"),
            (9007199254740993.0, "9007199254740992.0"),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
            (f64::NEG_INFINITY, "null"),
        ];
        for (f, want) in cases {
            assert_eq!(enc(&Value::Float(*f)), *want, "float {f:e}");
        }
    }

    #[test]
    fn integers_are_exact() {
        assert_eq!(enc(&Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(enc(&Value::Int(0)), "0");
        assert_eq!(enc(&Value::UInt(u64::MAX)), "18446744073709551615");
    }

    #[test]
    fn strings_escape_exactly_the_controls() {
        let s = "\"\\\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}/<é\u{2028}🦀";
        assert_eq!(
            enc(&Value::String(s.into())),
            "\"\\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\u{7f}/<é\u{2028}🦀\""
        );
    }

    #[test]
    fn objects_sort_by_utf8_bytes_and_last_duplicate_wins() {
        let obj = Value::Object(vec![
            ("é".into(), Value::Int(1)),
            ("\u{ffff}".into(), Value::Int(2)),
            ("🦀".into(), Value::Int(3)),
            ("a".into(), Value::Int(4)),
            ("".into(), Value::Int(5)),
            ("a".into(), Value::Int(6)),
        ]);
        assert_eq!(enc(&obj), "{\"\":5,\"a\":6,\"é\":1,\"\u{ffff}\":2,\"🦀\":3}");
    }

    #[test]
    fn depth_limit_is_an_error_not_a_crash() {
        let mut v = Value::Null;
        for _ in 0..MAX_DEPTH {
            v = Value::Array(vec![v]);
        }
        assert!(canonical_json(&v).is_ok());
        let v = Value::Array(vec![v]);
        assert_eq!(canonical_json(&v), Err(Error::TooDeep { max: MAX_DEPTH }));
    }
}
