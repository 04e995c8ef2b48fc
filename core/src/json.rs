//! "Awa canonical JSON v1": the exact bytes released Awa hashes for `unique_key` args.
//!
//! Written here rather than delegated to serde_json so that a dependency bump, or a
//! `preserve_order` feature switched on anywhere in a build graph, cannot move a byte.

use std::fmt::Write as _;

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

/// Encode `value` as Awa canonical JSON v1 (see `docs/contract.md` §1).
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
        Value::Float(f) => write_float(*f, out)?,
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
            let mut emit = |(key, val): &(String, Value), out: &mut Vec<u8>| {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_string(key, out);
                out.push(b':');
                write_value(val, out, depth + 1)
            };
            if is_strictly_sorted(members) {
                // Machine-built args are usually sorted already: no index work at all.
                for m in members {
                    emit(m, out)?;
                }
            } else {
                // Small objects sort on the stack, in a buffer sized to the object (zeroing a
                // large one per object would cost more than the sort saves); an object too
                // big for a buffer takes the next one, and the largest the general sort.
                let mut buf8 = [(0u64, 0u8); 8];
                let small = sort_small(members, &mut buf8);
                if let Some(sorted) = small {
                    for m in sorted {
                        emit(m, out)?;
                    }
                } else {
                    let mut buf = [(0u64, 0u8); SMALL_OBJECT];
                    let medium = sort_small(members, &mut buf);
                    if let Some(sorted) = medium {
                        for m in sorted {
                            emit(m, out)?;
                        }
                    } else {
                        for m in sorted_members(members) {
                            emit(m, out)?;
                        }
                    }
                }
            }
            out.push(b'}');
        }
    }
    Ok(())
}

/// Objects up to this many members sort on the stack.
const SMALL_OBJECT: usize = 32;

/// Members of an object with at most `N` members in key byte order, last duplicate winning,
/// sorted as (prefix, index) pairs in `buf`: no allocation, and most comparisons are one
/// integer compare. The prefix (first 8 key bytes big-endian, zero-padded) orders like the
/// bytes; equal prefixes are ordered by the full key ([`sorted_members`] is the definition;
/// `sort_small_equals_general_sort` checks the two agree). `None` when the object has more
/// than `N` members: the caller then sorts another way, never a truncated object.
fn sort_small<'a, const N: usize>(
    members: &'a [(String, Value)],
    buf: &'a mut [(u64, u8); N],
) -> Option<impl Iterator<Item = &'a (String, Value)> + 'a> {
    const { assert!(N <= 256, "member indices are stored as u8") };
    let idx: &'a mut [(u64, u8)] = buf.get_mut(..members.len())?;
    for (i, (slot, m)) in idx.iter_mut().zip(members).enumerate() {
        // i < members.len() <= N <= 256, so the index fits in a u8.
        *slot = (key_prefix(m.0.as_bytes()), i as u8);
    }
    idx.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| key_of(members, a.1).cmp(key_of(members, b.1)))
    });
    let idx: &'a [(u64, u8)] = idx;
    Some(idx.iter().enumerate().filter_map(move |(p, e)| {
        // Stable sort keeps insertion order among equal keys, so the last of a run is the
        // last inserted: serde_json's map semantics (last wins).
        let superseded = idx
            .get(p + 1)
            .is_some_and(|next| next.0 == e.0 && key_of(members, next.1) == key_of(members, e.1));
        (!superseded).then(|| member(members, e.1))
    }))
}

/// The first 8 bytes of a key as a big-endian integer, zero-padded.
fn key_prefix(key: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    // Copies min(8, key.len()) bytes: exactly the prefix, the rest stays zero padding.
    for (dst, src) in b.iter_mut().zip(key) {
        *dst = *src;
    }
    u64::from_be_bytes(b)
}

/// Member `i` of an object; `i` is always an `enumerate()` position in `members`.
#[expect(
    clippy::indexing_slicing,
    reason = "indices come from enumerating `members` in sort_small, so i < members.len()"
)]
fn member(members: &[(String, Value)], i: u8) -> &(String, Value) {
    &members[usize::from(i)]
}

fn key_of(members: &[(String, Value)], i: u8) -> &[u8] {
    member(members, i).0.as_bytes()
}

fn is_strictly_sorted(members: &[(String, Value)]) -> bool {
    members
        .windows(2)
        .all(|w| matches!(w, [a, b] if a.0.as_bytes() < b.0.as_bytes()))
}

/// Members of a large object in UTF-8 byte order of their keys, keeping only the last of
/// equal keys.
fn sorted_members(members: &[(String, Value)]) -> Vec<&(String, Value)> {
    let mut refs: Vec<&(String, Value)> = members.iter().collect();
    refs.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut dedup: Vec<&(String, Value)> = Vec::with_capacity(refs.len());
    for m in refs {
        match dedup.last_mut() {
            Some(last) if last.0 == m.0 => *last = m,
            _ => dedup.push(m),
        }
    }
    dedup
}

fn write_int(i: i64, out: &mut Vec<u8>) {
    if i < 0 {
        out.push(b'-');
    }
    write_uint(i.unsigned_abs(), out);
}

/// Exact decimal of `u`, two digits per division (the definition is `u.to_string()`;
/// `integers_match_std_decimal` compares the two at every magnitude).
fn write_uint(u: u64, out: &mut Vec<u8>) {
    // u64::MAX has 20 digits: ten pairs, filled from the right until the quotient is 0.
    let mut pairs = [[0u8; 2]; 10];
    let mut rest = u;
    let mut used = 0;
    for slot in pairs.iter_mut().rev() {
        // rest % 100 < 100, so the cast cannot truncate.
        let p = (rest % 100) as u8;
        *slot = [b'0' + p / 10, b'0' + p % 10];
        used += 1;
        rest /= 100;
        if rest == 0 {
            break;
        }
    }
    // Leading unused pairs, plus the leading zero of the top pair (u = 0 keeps its last "0").
    let top_is_one_digit = pairs
        .get(pairs.len() - used)
        .is_some_and(|pair| pair[0] == b'0');
    let skip = 2 * (pairs.len() - used) + usize::from(top_is_one_digit);
    let digits = pairs.as_flattened();
    out.extend_from_slice(sub(digits, skip..digits.len()));
}

/// `bytes[range]`, for ranges the caller computed inside `bytes`.
#[expect(
    clippy::indexing_slicing,
    reason = "callers pass start <= end <= bytes.len(): write_uint's skip <= 19 of 20 (one \
              pair is always used), write_string's run from `start` to its current index"
)]
fn sub(bytes: &[u8], range: std::ops::Range<usize>) -> &[u8] {
    &bytes[range]
}

/// Lowercase hex digit of a nibble (`n` < 16).
fn hex_digit(n: u8) -> u8 {
    match n {
        0..=9 => b'0' + n,
        _ => b'a' + (n & 0xf) - 10,
    }
}

/// Bytes that must be escaped inside a JSON string: the C0 controls, `"` and `\\`.
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        // The unescaped run before this byte: start <= i < bytes.len().
        out.extend_from_slice(sub(bytes, start..i));
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x0c => b"\\f",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            _ => b"",
        };
        if esc.is_empty() {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                hex_digit(b >> 4),
                hex_digit(b & 0xf),
            ]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(sub(bytes, start..bytes.len()));
    out.push(b'"');
}

/// Lay out a finite double from its shortest round-trip digits.
///
/// With `v = 0.d1…dL × 10^k`: `k-L >= 0 && k <= 16` → digits, zeros, `.0`;
/// `0 < k <= 16` → point inside the digits; `-5 < k <= 0` → `0.` then `-k` zeros then digits;
/// otherwise `d[.ddd]e±X` with an explicit sign and no padding.
///
/// # Errors
/// [`Error::FloatDigits`] if the digit extraction ever broke its own invariants (a bug): the
/// encoder then refuses instead of writing plausible wrong bytes.
fn write_float(f: f64, out: &mut Vec<u8>) -> Result<(), Error> {
    if !f.is_finite() {
        out.extend_from_slice(b"null");
        return Ok(());
    }
    let bug = || Error::FloatDigits { bits: f.to_bits() };
    if f.is_sign_negative() {
        out.push(b'-');
    }
    // std's `{:e}` prints the shortest digits that round-trip (closest on ties): the same
    // digit string Ryū and zmij produce. The layout below is ours and pinned by vectors.
    let mut digit_buf = [0u8; 24];
    let (n, exp) = shortest_digits(f.abs(), &mut digit_buf).ok_or_else(bug)?;
    let digits = digit_buf.get(..n).ok_or_else(bug)?;
    let len = i32::try_from(n).map_err(|_| bug())?;
    let k = exp + 1;
    if k - len >= 0 && k <= 16 {
        out.extend_from_slice(digits);
        let zeros = usize::try_from(k - len).map_err(|_| bug())?;
        out.extend(std::iter::repeat_n(b'0', zeros));
        out.extend_from_slice(b".0");
    } else if 0 < k && k <= 16 {
        // Here k < len (the branch above took k >= len), so the point falls inside the digits.
        let point = usize::try_from(k).map_err(|_| bug())?;
        let (int, frac) = digits.split_at_checked(point).ok_or_else(bug)?;
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    } else if -5 < k && k <= 0 {
        out.extend_from_slice(b"0.");
        let zeros = usize::try_from(-k).map_err(|_| bug())?;
        out.extend(std::iter::repeat_n(b'0', zeros));
        out.extend_from_slice(digits);
    } else {
        let (first, rest) = digits.split_first().ok_or_else(bug)?;
        out.push(*first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.push(b'e');
        out.push(if exp >= 0 { b'+' } else { b'-' });
        write_uint(u64::from(exp.unsigned_abs()), out);
    }
    Ok(())
}

/// Exact powers of ten as f64 (all exactly representable up to 10^22).
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];
const TWO_POW_53: f64 = 9_007_199_254_740_992.0;

/// The shortest round-trip significant digits of a finite `a >= 0` (the closest such digits;
/// an exact tie between two goes to the even last digit, as Ryū/zmij do) into
/// `out`, returning `(len, exp)` with `a = d1.d2…dlen × 10^exp`, `1 <= len <= 24`.
/// `None` only if std's output broke the shape this relies on (never seen; a bug to report).
fn shortest_digits(a: f64, out: &mut [u8; 24]) -> Option<(usize, i32)> {
    if let Some((mut n, d)) = short_decimal(a) {
        // `n` < 2^53 has at most 16 digits; `tmp` holds 20.
        let mut tmp = [0u8; 20];
        let mut pos = tmp.len();
        while n > 0 {
            pos = pos.checked_sub(1)?;
            // n % 10 < 10, so the cast cannot truncate.
            *tmp.get_mut(pos)? = b'0' + (n % 10) as u8;
            n /= 10;
        }
        let all = tmp.get(pos..)?;
        // `n` has no trailing zeros beyond the integer part; strip those too.
        let len = all.iter().rposition(|&c| c != b'0')? + 1;
        out.get_mut(..len)?.copy_from_slice(all.get(..len)?);
        return Some((len, i32::try_from(all.len()).ok()? - d - 1));
    }
    // General case: std's `{:e}` prints the shortest digit count that round-trips, and the
    // closest such digits, but it breaks an exact tie between two closest candidates upward.
    // Released Awa (Ryū/zmij) breaks it to the even digit. std's exact-precision mode rounds
    // the exact binary value half-to-even, so when that candidate also round-trips it is the
    // released answer (in every non-tie case the two agree).
    let mut sci = StackBuf::default();
    // `{:e}` of an f64 is at most 24 bytes and the buffer holds 48: an error is a bug.
    write!(sci, "{a:e}").ok()?;
    let (mut n, mut exp) = split_sci(sci.as_bytes(), out)?;
    if n > 1 {
        let mut exact = StackBuf::default();
        write!(exact, "{:.*e}", n - 1, a).ok()?;
        let round_trips = std::str::from_utf8(exact.as_bytes())
            .ok()?
            .parse::<f64>()
            .ok()?
            == a;
        if round_trips {
            let mut alt = [0u8; 24];
            let (m, e) = split_sci(exact.as_bytes(), &mut alt)?;
            if (m, e) != (n, exp) || alt.get(..m)? != out.get(..n)? {
                out.get_mut(..m)?.copy_from_slice(alt.get(..m)?);
                (n, exp) = (m, e);
            }
        }
    }
    Some((n, exp))
}

/// Split std's `d.ddde[-]x` into significant digits (trailing zeros dropped, at least one
/// digit kept) and exponent; `None` unless `sci` has exactly that shape.
fn split_sci(sci: &[u8], out: &mut [u8; 24]) -> Option<(usize, i32)> {
    let e_at = sci.iter().position(|&c| c == b'e')?;
    let (mantissa, exp) = sci.split_at_checked(e_at)?;
    let exp = parse_exp(exp.get(1..)?)?;
    let mut n = 0;
    for &c in mantissa {
        match c {
            b'0'..=b'9' => {
                *out.get_mut(n)? = c;
                n += 1;
            }
            b'.' => {}
            _ => return None,
        }
    }
    if n == 0 {
        return None;
    }
    while n > 1 && out.get(n - 1) == Some(&b'0') {
        n -= 1;
    }
    Some((n, exp))
}

/// Fast path for values that are short decimals (`a = N / 10^d`, `N < 2^53`, `d <= 15`), which
/// covers most floats in real args. Returns `(N, d)` only when it is provably the unique
/// shortest round-trip form: `d` is the smallest decimal count at which any integer
/// round-trips, and neither neighbour of `N` round-trips at `d`. Anything else falls back to
/// the general case, which computes the same digits without this shortcut.
fn short_decimal(a: f64) -> Option<(u64, i32)> {
    if a == 0.0 || !a.is_finite() {
        return None;
    }
    let round_trips = |n: f64, p: f64| (0.0..TWO_POW_53).contains(&n) && n / p == a;
    // 10^(d-1), the previous scale, once there is one.
    let mut previous: Option<f64> = None;
    for (d, &p) in (0i32..).zip(POW10.iter()) {
        let scaled = a * p;
        if scaled >= TWO_POW_53 {
            return None;
        }
        let n = scaled.round();
        if round_trips(n, p) {
            // Integers below 2^53 divided by an exact power of ten are correctly rounded, so
            // these comparisons are exact: a second candidate at `d` means a tie (let std
            // choose), and a candidate at `d - 1` means `d` was not minimal.
            if round_trips(n - 1.0, p) || round_trips(n + 1.0, p) {
                return None;
            }
            if let Some(q) = previous {
                let lower = (a * q).floor();
                if round_trips(lower, q) || round_trips(lower + 1.0, q) {
                    return None;
                }
            }
            // `n` < 2^53 is an exact non-negative integer, so the cast is lossless.
            return Some((n as u64, d));
        }
        previous = Some(p);
    }
    None
}

/// A fixed stack buffer for float digits (no heap allocation per float). A write that does
/// not fit is an error, never a truncation.
struct StackBuf {
    buf: [u8; 48],
    len: usize,
}

impl Default for StackBuf {
    fn default() -> Self {
        Self {
            buf: [0; 48],
            len: 0,
        }
    }
}

impl StackBuf {
    fn as_bytes(&self) -> &[u8] {
        // `write_str` keeps len <= buf.len().
        self.buf.split_at(self.len).0
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Parse the decimal exponent std writes after `e` (optional `-`, then digits) with std's own
/// integer parser; `None` for anything else.
fn parse_exp(s: &[u8]) -> Option<i32> {
    std::str::from_utf8(s).ok()?.parse().ok()
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
            (-914_793_674_309_639.0 - 0.25, "-914793674309639.2"),
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

    /// Float digits must equal the released encoder's (serde_json with zmij) everywhere:
    /// random bit patterns, short decimals, and exact ties between two shortest candidates.
    #[test]
    fn float_digits_match_released_serde_json() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let check = |a: f64| {
            let theirs = serde_json::to_string(&serde_json::Value::from(a)).unwrap();
            assert_eq!(
                enc(&Value::Float(a)),
                theirs,
                "float bits {:016x}",
                a.to_bits()
            );
        };
        for i in 0..300_000u64 {
            let r = next();
            let a = match i % 5 {
                0 => f64::from_bits(r >> 1),
                1 => (r % 10_000_000) as f64 / POW10[(r >> 40) as usize % 16],
                2 => (r >> 11) as f64 / POW10[(r % 16) as usize],
                3 => ((r % 1000) as f64 + 0.5) * POW10[(r >> 50) as usize % 16],
                // Binary fractions above 2^49: shortest forms with exact ties.
                _ => {
                    ((r >> 12) as f64 + [0.25, 0.5, 0.75][(r % 3) as usize])
                        * 2f64.powi((r % 5) as i32)
                }
            };
            if a.is_finite() {
                check(a);
                check(-a);
            }
        }
        for a in [
            0.1,
            0.2,
            0.1 + 0.2,
            1.0 / 3.0,
            2.5,
            1e15,
            999999999999999.9,
            5e-5,
            -914_793_674_309_639.0 - 0.25,
        ] {
            check(a);
        }
    }

    #[test]
    fn integers_match_std_decimal() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for i in 0..200_000u64 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Every magnitude: shift the random value down to 0..=64 bits.
            let u = if i < 1000 {
                i
            } else {
                state >> (i % 65).min(63)
            };
            assert_eq!(enc(&Value::UInt(u)), u.to_string());
            let s = u as i64;
            assert_eq!(enc(&Value::Int(s)), s.to_string());
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
        assert_eq!(
            enc(&obj),
            "{\"\":5,\"a\":6,\"é\":1,\"\u{ffff}\":2,\"🦀\":3}"
        );
    }

    #[test]
    fn prefix_sort_agrees_with_byte_order_on_padding_edges() {
        // Keys that tie or differ only past 8 bytes, in the zero padding, or by a NUL; the
        // whole list takes the 32-slot path, its first 7 keys the 8-slot path.
        let all = [
            "abcdefgh2",
            "abcdefgh",
            "x\u{0}",
            "abcdefgh1",
            "x",
            "",
            "abcdefgh1",
            "\u{0}",
            "xa",
            "\u{1}",
            "abcdefg",
        ];
        for keys in [&all[..], &all[..7]] {
            let obj = Value::Object(
                keys.iter()
                    .enumerate()
                    .map(|(i, k)| ((*k).to_owned(), Value::Int(i as i64)))
                    .collect(),
            );
            let mut sorted: Vec<(usize, &str)> = keys.iter().copied().enumerate().collect();
            sorted.sort_by(|a, b| a.1.as_bytes().cmp(b.1.as_bytes()));
            let mut want: Vec<(&str, usize)> = Vec::new();
            for (i, k) in sorted {
                match want.last_mut() {
                    Some(last) if last.0 == k => last.1 = i,
                    _ => want.push((k, i)),
                }
            }
            let members: Vec<String> = want
                .iter()
                .map(|(k, i)| format!("{}:{i}", enc(&Value::String((*k).into()))))
                .collect();
            assert_eq!(enc(&obj), format!("{{{}}}", members.join(",")));
        }
    }

    /// Property test: the stack sorts (8 and 32 slots) agree with the general sort, which is
    /// the definition, on random objects of every size around both limits, with duplicate
    /// keys, shared 8-byte prefixes, NULs and multibyte keys.
    #[test]
    fn sort_small_equals_general_sort() {
        let alphabet = [
            "",
            "a",
            "\u{0}",
            "é",
            "abcdefgh",
            "abcdefgh\u{0}",
            "abcdefghi",
            "🦀",
            "z",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..3_000 {
            let size = round % 41;
            let members: Vec<(String, Value)> = (0..size)
                .map(|i| {
                    let r = next();
                    let a = alphabet[(r % alphabet.len() as u64) as usize];
                    let b = alphabet[((r >> 8) % alphabet.len() as u64) as usize];
                    (format!("{a}{b}"), Value::Int(i as i64))
                })
                .collect();
            let want: Vec<(String, Value)> =
                sorted_members(&members).into_iter().cloned().collect();
            assert_eq!(
                enc(&Value::Object(members.clone())),
                enc(&Value::Object(want)),
                "{members:?}"
            );
        }
    }

    #[test]
    fn sort_small_declines_objects_larger_than_its_buffer() {
        let members: Vec<(String, Value)> = (0..9)
            .map(|i| (format!("k{}", 9 - i), Value::Null))
            .collect();
        let mut buf8 = [(0u64, 0u8); 8];
        assert!(sort_small(&members, &mut buf8).is_none());
        let mut buf32 = [(0u64, 0u8); 32];
        assert_eq!(
            sort_small(&members, &mut buf32).map(Iterator::count),
            Some(9)
        );
    }

    #[test]
    fn digit_extraction_refuses_malformed_std_output() {
        let mut out = [0u8; 24];
        assert_eq!(split_sci(b"1.25e-7", &mut out), Some((3, -7)));
        assert_eq!(&out[..3], b"125");
        assert_eq!(split_sci(b"1.0e0", &mut out), Some((1, 0)));
        for bad in [
            &b"125"[..],
            b"1.25e",
            b"1.25ex",
            b"e5",
            b"1,5e2",
            b"1.5e99999999999",
        ] {
            assert_eq!(
                split_sci(bad, &mut out),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        // 25 significant digits do not fit the 24-byte buffer: refused, not truncated.
        assert_eq!(split_sci(b"1.234567890123456789012345e0", &mut out), None);
        assert_eq!(parse_exp(b"-12"), Some(-12));
        assert_eq!(parse_exp(b"1a"), None);
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
