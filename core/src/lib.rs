//! Pure reference implementation of Awa's SQL producer contract, version 1.
//!
//! Every function here takes bytes (or a [`Value`]) and returns bytes or integers. There is
//! no I/O, no async and no global state, and no input can make a function panic: inputs that
//! the contract rejects come back as a typed [`Error`]. The normative text is
//! `docs/contract.md`; each function's doc comment restates the exact byte framing it hashes.
//!
//! | family               | function                                   | released in Awa |
//! |----------------------|--------------------------------------------|-----------------|
//! | canonical_json       | [`canonical_json`]                         | 0.6.x           |
//! | unique_key           | [`unique_key`], [`unique_key_preimage`]    | 0.6.x           |
//! | ordering_shard       | [`ordering_key_hash64`], [`ordering_shard`]| 0.6.x           |
//! | partition            | [`partition_for_ordering_key`]             | 0.6.x           |
//! | concurrency_digest   | [`concurrency_digest`]                     | contract v1     |
//! | concurrency_shard    | [`concurrency_shard`]                      | contract v1     |
//! | routing_precedence   | [`route`]                                  | contract v1     |
//! | move_shard           | [`move_shard`]                             | contract v1     |
//! | unique_states        | [`unique_states_bits`]                     | 0.6.x           |

mod concurrency;
mod error;
mod json;
mod ordering;
mod routing;
mod states;
mod unique;

pub use concurrency::{
    concurrency_digest, concurrency_preimage, concurrency_shard, CONCURRENCY_DOMAIN_TAG, DIGEST_LEN,
};
pub use error::Error;
pub use json::{canonical_json, canonical_json_into, Value, MAX_DEPTH};
pub use ordering::{
    ordering_key_hash64, ordering_key_hash64_naive, ordering_shard, partition_for_ordering_key,
    partition_hash64, physical_queue_name, Partitions, MAX_PARTITIONS, ORDERING_HASH_OFFSET,
    ORDERING_HASH_PRIME, PARTITION_HASH_DOMAIN,
};
pub use routing::{
    move_shard, route, shard_admitted, validate_key, Route, RouteSource, Width, MAX_KEY_LEN,
    MAX_WIDTH,
};
pub use states::{parse_unique_states_bits, unique_states_bits, DEFAULT_UNIQUE_STATES, JOB_STATES};
pub use unique::{unique_key, unique_key_preimage, UNIQUE_KEY_LEN};

/// The contract version these functions implement (`awa.contract_version()` in SQL).
pub const CONTRACT_VERSION: u32 = 1;

/// The first `N` bytes of an `M`-byte array. `N <= M` is checked when the function is
/// instantiated (a compile error otherwise), so every output byte is copied from the input:
/// there is no run-time branch that could leave zeros behind.
fn array_prefix<const N: usize, const M: usize>(bytes: &[u8; M]) -> [u8; N] {
    const { assert!(N <= M, "prefix longer than the array") };
    let mut out = [0u8; N];
    for (dst, src) in out.iter_mut().zip(bytes) {
        *dst = *src;
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn array_prefix_copies_every_byte() {
        let a: [u8; 32] = std::array::from_fn(|i| i as u8 + 1);
        let p: [u8; 8] = super::array_prefix(&a);
        assert_eq!(p, [1, 2, 3, 4, 5, 6, 7, 8]);
        let whole: [u8; 32] = super::array_prefix(&a);
        assert_eq!(whole, a);
        let none: [u8; 0] = super::array_prefix(&a);
        assert_eq!(none, [0u8; 0]);
    }
}
