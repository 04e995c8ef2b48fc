//! Ordering-key enqueue-shard hash and PartitionedQueue routing, as released Awa computes them.

use crate::{Error, Width};

/// Start value of the ordering hash: the 64-bit FNV offset basis.
pub const ORDERING_HASH_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// Multiplier of the ordering hash: the 64-bit FNV prime.
pub const ORDERING_HASH_PRIME: u64 = 0x0000_0100_0000_01b3;
/// XOR domain applied before the SplitMix64 finaliser in partition routing (ADR-031).
pub const PARTITION_HASH_DOMAIN: u64 = 0x9d4d_1b2f_53a7_0c91;
/// The largest partition count released `PartitionedQueue` accepts (`i16::MAX`).
pub const MAX_PARTITIONS: u16 = 32767;

const P: u64 = ORDERING_HASH_PRIME;
const P2: u64 = P.wrapping_mul(P);
const P3: u64 = P2.wrapping_mul(P);
const P4: u64 = P3.wrapping_mul(P);
const P5: u64 = P4.wrapping_mul(P);
const P6: u64 = P5.wrapping_mul(P);
const P7: u64 = P6.wrapping_mul(P);
const P8: u64 = P7.wrapping_mul(P);

/// The released ordering-key hash: `h = 0xcbf29ce484222325; for b in key { h = h*0x100000001b3 + b }`
/// with every step mod 2^64 (multiply **then add**: neither FNV-1 nor FNV-1a).
///
/// The key is raw bytes; the empty key hashes to the offset basis.
///
/// This version unrolls eight steps into `h*P^8 + Σ b_i*P^(7-i)` so the eight multiplies are
/// independent; the result is identical to [`ordering_key_hash64_naive`] on every input.
#[must_use]
pub fn ordering_key_hash64(key: &[u8]) -> u64 {
    let mut h = ORDERING_HASH_OFFSET;
    let mut chunks = key.chunks_exact(8);
    for c in &mut chunks {
        let mut b = [0u64; 8];
        for (slot, byte) in b.iter_mut().zip(c) {
            *slot = u64::from(*byte);
        }
        let [b0, b1, b2, b3, b4, b5, b6, b7] = b;
        let lo = b7
            .wrapping_add(b6.wrapping_mul(P))
            .wrapping_add(b5.wrapping_mul(P2))
            .wrapping_add(b4.wrapping_mul(P3));
        let hi = b3
            .wrapping_mul(P4)
            .wrapping_add(b2.wrapping_mul(P5))
            .wrapping_add(b1.wrapping_mul(P6))
            .wrapping_add(b0.wrapping_mul(P7));
        h = h.wrapping_mul(P8).wrapping_add(lo).wrapping_add(hi);
    }
    for &b in chunks.remainder() {
        h = h.wrapping_mul(P).wrapping_add(u64::from(b));
    }
    h
}

/// The one-byte-at-a-time form of [`ordering_key_hash64`], kept as the executable definition
/// and as the benchmark baseline.
#[must_use]
pub fn ordering_key_hash64_naive(key: &[u8]) -> u64 {
    key.iter().fold(ORDERING_HASH_OFFSET, |h, &b| {
        h.wrapping_mul(P).wrapping_add(u64::from(b))
    })
}

/// `ordering_key_hash64(key) mod width`: the enqueue shard an explicit ordering key selects.
#[must_use]
pub fn ordering_shard(key: &[u8], width: Width) -> u8 {
    // The remainder is < width <= 64, so it fits in u8.
    (ordering_key_hash64(key) % u64::from(width.get())) as u8
}

/// A validated PartitionedQueue partition count, 1..=32767.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Partitions(u16);

impl Partitions {
    /// Validate a partition count.
    ///
    /// # Errors
    /// [`Error::InvalidPartitions`] outside 1..=32767.
    pub fn new(n: i64) -> Result<Self, Error> {
        match u16::try_from(n) {
            Ok(v) if (1..=MAX_PARTITIONS).contains(&v) => Ok(Self(v)),
            _ => Err(Error::InvalidPartitions(n)),
        }
    }

    /// The count.
    #[must_use]
    pub fn get(self) -> u16 {
        self.0
    }
}

/// SplitMix64 finaliser over `ordering_key_hash64(key) XOR 0x9d4d1b2f53a70c91` (released
/// `partition_hash64`).
#[must_use]
pub fn partition_hash64(key: &[u8]) -> u64 {
    let mut v = ordering_key_hash64(key) ^ PARTITION_HASH_DOMAIN;
    v ^= v >> 30;
    v = v.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    v ^= v >> 27;
    v = v.wrapping_mul(0x94d0_49bb_1331_11eb);
    v ^ (v >> 31)
}

/// `partition_hash64(key) mod partitions`, and 0 for a single partition.
#[must_use]
pub fn partition_for_ordering_key(key: &[u8], partitions: Partitions) -> u16 {
    // The remainder is < partitions <= 32767, so it fits in u16.
    (partition_hash64(key) % u64::from(partitions.get())) as u16
}

/// The physical queue name of partition `index` of `logical`: the logical name itself for
/// partition 0, else `{logical}__p{index}` (released `DEFAULT_PHYSICAL_QUEUE_SUFFIX`).
#[must_use]
pub fn physical_queue_name(logical: &str, index: u16) -> String {
    if index == 0 {
        logical.to_owned()
    } else {
        format!("{logical}__p{index}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unrolled_equals_naive_at_every_length() {
        let data: Vec<u8> = (0..300u32)
            .map(|i| (i.wrapping_mul(167) ^ 0x5a) as u8)
            .collect();
        for n in 0..data.len() {
            assert_eq!(
                ordering_key_hash64(&data[..n]),
                ordering_key_hash64_naive(&data[..n])
            );
        }
        assert_eq!(
            ordering_key_hash64(&[0xff; 64]),
            ordering_key_hash64_naive(&[0xff; 64])
        );
    }

    #[test]
    fn unrolled_equals_naive_on_random_keys() {
        // Property test: random bytes (every value, so every partial product of the unrolled
        // sum wraps) at lengths around several 8-byte chunk boundaries.
        let mut state = 0x853c_49e6_748f_ea9bu64;
        for i in 0..20_000u32 {
            let len = (i as usize) % 70;
            let key: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 56) as u8
                })
                .collect();
            assert_eq!(
                ordering_key_hash64(&key),
                ordering_key_hash64_naive(&key),
                "{key:02x?}"
            );
        }
    }

    #[test]
    fn empty_key_is_offset_basis() {
        assert_eq!(ordering_key_hash64(b""), ORDERING_HASH_OFFSET);
    }

    #[test]
    fn high_bit_bytes_collide_at_power_of_two_widths() {
        for w in [2, 4, 8, 16, 32, 64] {
            let w = Width::new(w).unwrap();
            assert_eq!(ordering_shard(&[0x00], w), ordering_shard(&[0x80], w));
        }
    }

    #[test]
    fn partitions_validate_and_name() {
        assert!(Partitions::new(0).is_err());
        assert!(Partitions::new(32768).is_err());
        let one = Partitions::new(1).unwrap();
        assert_eq!(partition_for_ordering_key(b"anything", one), 0);
        assert_eq!(physical_queue_name("orders", 0), "orders");
        assert_eq!(physical_queue_name("orders", 3), "orders__p3");
    }
}
