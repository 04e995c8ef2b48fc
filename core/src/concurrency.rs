//! The domain-separated SHA-256 concurrency-key digest (ADR-033, contract v1 D1/D2).

use sha2::{Digest, Sha256};

use crate::Width;

/// Domain tag prefixed to every concurrency key: `awa:concurrency_key:v1` then one `0x00`.
///
/// Fixed length with its only NUL at the end, so the pre-image splits uniquely into
/// (tag, key) and no other `awa:<family>:v<N>\0` tag is a prefix of it (docs/adr/0001).
pub const CONCURRENCY_DOMAIN_TAG: &[u8; 23] = b"awa:concurrency_key:v1\0";

/// Length of a concurrency digest in bytes.
pub const DIGEST_LEN: usize = 32;

/// The bytes hashed for a concurrency key: `CONCURRENCY_DOMAIN_TAG || key`.
#[must_use]
pub fn concurrency_preimage(key: &[u8]) -> Vec<u8> {
    let mut pre = Vec::with_capacity(CONCURRENCY_DOMAIN_TAG.len() + key.len());
    pre.extend_from_slice(CONCURRENCY_DOMAIN_TAG);
    pre.extend_from_slice(key);
    pre
}

/// `SHA-256(CONCURRENCY_DOMAIN_TAG || key)`; `key` is raw bytes (a text key: its UTF-8 bytes).
///
/// PostgreSQL computes the same value as
/// `sha256(decode('6177613a636f6e63757272656e63795f6b65793a763100', 'hex') || key)`.
#[must_use]
pub fn concurrency_digest(key: &[u8]) -> [u8; DIGEST_LEN] {
    // Keys up to 32 bytes (tag + key + 0x80 + 8-byte length fit in 64 bytes): the pre-image is
    // a single SHA-256 block, padded here (FIPS 180-4 §5.1.1) and compressed once. Exactly
    // SHA-256, minus the streaming API's buffering; `single_block_equals_sha256` proves it.
    if let Some(block) = single_block(key) {
        let mut state = SHA256_H0;
        sha2::compress256(&mut state, &[block.into()]);
        let mut out = [0u8; DIGEST_LEN];
        for (chunk, word) in out.chunks_exact_mut(4).zip(state) {
            chunk.copy_from_slice(&word.to_be_bytes());
        }
        return out;
    }
    concurrency_digest_streaming(key)
}

/// The definition: streaming SHA-256 over `CONCURRENCY_DOMAIN_TAG || key`, for any length.
fn concurrency_digest_streaming(key: &[u8]) -> [u8; DIGEST_LEN] {
    let mut h = Sha256::new();
    h.update(CONCURRENCY_DOMAIN_TAG);
    h.update(key);
    h.finalize().into()
}

/// The padded single SHA-256 block of `CONCURRENCY_DOMAIN_TAG || key`, or `None` when the
/// pre-image needs more than one block. Every split is checked, so a pre-image that does not
/// fit goes to the streaming definition instead of being silently truncated.
fn single_block(key: &[u8]) -> Option<[u8; 64]> {
    let total = CONCURRENCY_DOMAIN_TAG.len() + key.len();
    if total > SINGLE_BLOCK_MAX {
        return None;
    }
    let mut block = [0u8; 64];
    let (message, length) = block.split_last_chunk_mut::<8>()?;
    let (tag, rest) = message.split_first_chunk_mut::<23>()?;
    *tag = *CONCURRENCY_DOMAIN_TAG;
    let (body, padding) = rest.split_at_mut_checked(key.len())?;
    // `body` is exactly `key.len()` bytes long, so the zip copies every key byte.
    for (dst, src) in body.iter_mut().zip(key) {
        *dst = *src;
    }
    *padding.first_mut()? = 0x80;
    // total <= 55, so the bit length cannot overflow.
    *length = ((total as u64) * 8).to_be_bytes();
    Some(block)
}

/// The longest pre-image that pads into one 64-byte SHA-256 block.
const SINGLE_BLOCK_MAX: usize = 55;

/// SHA-256 initial hash value (FIPS 180-4 §5.3.3).
const SHA256_H0: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

/// The enqueue shard a concurrency digest selects: the first 8 digest bytes read as a
/// big-endian u64, mod `width`.
#[must_use]
pub fn concurrency_shard(digest: &[u8; DIGEST_LEN], width: Width) -> u8 {
    let first: [u8; 8] = crate::array_prefix(digest);
    // The remainder is < width <= 64, so it fits in u8.
    (u64::from_be_bytes(first) % u64::from(width.get())) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_is_ascii_then_one_nul() {
        let (last, body) = CONCURRENCY_DOMAIN_TAG.split_last().unwrap();
        assert_eq!(*last, 0);
        assert!(body.iter().all(|b| b.is_ascii_graphic()));
    }

    #[test]
    fn digest_is_sha256_of_preimage() {
        let key = b"tenant-42";
        let want: [u8; 32] = Sha256::digest(concurrency_preimage(key)).into();
        assert_eq!(concurrency_digest(key), want);
        assert_ne!(concurrency_digest(b""), concurrency_digest(b"\0"));
    }

    #[test]
    fn single_block_equals_sha256() {
        // Every length on both sides of the one-block boundary (key lengths 0..=100).
        let data: Vec<u8> = (0..100u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in 0..=data.len() {
            let key = &data[..n];
            let want: [u8; 32] = Sha256::digest(concurrency_preimage(key)).into();
            assert_eq!(concurrency_digest(key), want, "key length {n}");
            assert_eq!(concurrency_digest_streaming(key), want, "key length {n}");
        }
    }

    #[test]
    fn fast_path_is_taken_exactly_up_to_one_block() {
        // The fast path must really run for short keys (else the equality test above proves
        // nothing about it) and must decline every key that needs a second block.
        let max_key = SINGLE_BLOCK_MAX - CONCURRENCY_DOMAIN_TAG.len();
        for n in 0..=100 {
            let key = vec![0xa5u8; n];
            assert_eq!(single_block(&key).is_some(), n <= max_key, "key length {n}");
        }
    }

    #[test]
    fn single_block_equals_sha256_on_random_keys() {
        // Property test: random bytes (all 256 values, NULs and high bits) at every one-block
        // length, against SHA-256 of the pre-image.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..20_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (i as usize) % 40;
            let key: Vec<u8> = state
                .to_le_bytes()
                .iter()
                .cycle()
                .take(len)
                .enumerate()
                .map(|(j, b)| b.wrapping_add((j as u8).wrapping_mul(29)))
                .collect();
            let want: [u8; 32] = Sha256::digest(concurrency_preimage(&key)).into();
            assert_eq!(concurrency_digest(&key), want, "key {key:02x?}");
        }
    }

    #[test]
    fn shard_is_the_first_eight_bytes_big_endian_mod_width() {
        // Exhaustive over widths, on digests whose every byte differs, against the definition.
        for seed in 0..64u8 {
            let d: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(97) ^ seed);
            let prefix = u64::from_be_bytes(d[..8].try_into().unwrap());
            for w in 1..=64 {
                let width = Width::new(w).unwrap();
                assert_eq!(u64::from(concurrency_shard(&d, width)), prefix % w as u64);
            }
        }
    }

    #[test]
    fn shard_reads_first_eight_bytes_big_endian() {
        let mut d = [0u8; 32];
        d[7] = 5;
        d[8] = 0xff; // ignored
        assert_eq!(concurrency_shard(&d, Width::new(64).unwrap()), 5);
        assert_eq!(concurrency_shard(&d, Width::new(3).unwrap()), 2);
        d[0] = 0x80;
        // 2^63 + 5 mod 7: 2^63 mod 7 = 1 → 6.
        assert_eq!(concurrency_shard(&d, Width::new(7).unwrap()), 6);
    }
}
