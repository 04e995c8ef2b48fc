//! `unique_key`: the client-side BLAKE3 dedupe key of released Awa 0.6.x (ADR-002).

use crate::{canonical_json_into, Error, Value};

/// Length of a `unique_key` in bytes (the BLAKE3 output truncated).
pub const UNIQUE_KEY_LEN: usize = 16;

/// The exact bytes hashed for a `unique_key`.
///
/// Framing (released Awa 0.6.9 `compute_unique_key`): the UTF-8 bytes of `kind`; then, for
/// each optional field **that is present**, one `0x00` byte followed by the field:
/// `queue` as UTF-8, `args` as Awa canonical JSON v1, `period_bucket` as 8 bytes i64
/// little-endian. Fields are neither tagged nor length-prefixed, so distinct inputs can share
/// a pre-image (the contract lists these collisions as released hazards).
///
/// # Errors
/// [`Error::TooDeep`] when `args` nests deeper than [`crate::MAX_DEPTH`].
pub fn unique_key_preimage(
    kind: &str,
    queue: Option<&str>,
    args: Option<&Value>,
    period_bucket: Option<i64>,
) -> Result<Vec<u8>, Error> {
    // Args are usually a few hundred bytes: one allocation up front avoids most regrowth.
    let mut pre = Vec::with_capacity(kind.len() + queue.map_or(0, str::len) + 512);
    pre.extend_from_slice(kind.as_bytes());
    if let Some(q) = queue {
        pre.push(0);
        pre.extend_from_slice(q.as_bytes());
    }
    if let Some(a) = args {
        pre.push(0);
        canonical_json_into(a, &mut pre)?;
    }
    if let Some(p) = period_bucket {
        pre.push(0);
        pre.extend_from_slice(&p.to_le_bytes());
    }
    Ok(pre)
}

/// `unique_key = BLAKE3(unique_key_preimage(..))[0..16]`.
///
/// # Errors
/// [`Error::TooDeep`] when `args` nests deeper than [`crate::MAX_DEPTH`].
pub fn unique_key(
    kind: &str,
    queue: Option<&str>,
    args: Option<&Value>,
    period_bucket: Option<i64>,
) -> Result<[u8; UNIQUE_KEY_LEN], Error> {
    let pre = unique_key_preimage(kind, queue, args, period_bucket)?;
    Ok(crate::array_prefix(blake3::hash(&pre).as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preimage_framing() {
        let args = Value::Object(vec![("b".into(), Value::Int(1)), ("a".into(), Value::Null)]);
        let pre = unique_key_preimage("k", Some("q"), Some(&args), Some(1)).unwrap();
        assert_eq!(pre, b"k\0q\0{\"a\":null,\"b\":1}\0\x01\0\0\0\0\0\0\0");
        assert_eq!(unique_key_preimage("k", None, None, None).unwrap(), b"k");
    }

    #[test]
    fn key_is_truncated_blake3() {
        let key = unique_key("k", None, None, None).unwrap();
        assert_eq!(&key[..], &blake3::hash(b"k").as_bytes()[..16]);
        // Every field combination and kind length: the key is the first 16 bytes of BLAKE3
        // of the pre-image, never a zero-filled or shifted copy.
        let args = Value::Array(vec![Value::Int(-1), Value::Float(0.5)]);
        for n in 0..200 {
            let kind: String = (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            for (q, a, p) in [
                (None, None, None),
                (Some("q"), None, None),
                (None, Some(&args), Some(n as i64)),
                (Some("q"), Some(&args), Some(-1)),
            ] {
                let pre = unique_key_preimage(&kind, q, a, p).unwrap();
                let hash = blake3::hash(&pre);
                let want = &hash.as_bytes()[..UNIQUE_KEY_LEN];
                assert_eq!(&unique_key(&kind, q, a, p).unwrap()[..], want);
            }
        }
    }

    #[test]
    fn released_field_ambiguity_collisions_are_reproduced() {
        // Released hazard: by_queue '{"a":1}' collides with by_args {"a":1}.
        let args = Value::Object(vec![("a".into(), Value::Int(1))]);
        assert_eq!(
            unique_key("K", Some("{\"a\":1}"), None, None).unwrap(),
            unique_key("K", None, Some(&args), None).unwrap()
        );
        assert_eq!(
            unique_key("K", Some("AAAAAAAA"), None, None).unwrap(),
            unique_key("K", None, None, Some(0x4141_4141_4141_4141)).unwrap()
        );
    }
}
