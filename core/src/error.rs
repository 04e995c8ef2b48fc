//! Typed errors for inputs the contract rejects; every message names the fix.

/// An input that the v1 contract rejects. The core returns these instead of panicking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A shard width outside 1..=64 (`queue_meta.enqueue_shards` range).
    #[error("invalid width {0}: enqueue shard widths are 1..=64; pass a width in that range")]
    InvalidWidth(i64),
    /// A partition count outside 1..=32767.
    #[error("invalid partition count {0}: PartitionedQueue supports 1..=32767 partitions")]
    InvalidPartitions(i64),
    /// An ordering or concurrency key longer than [`crate::MAX_KEY_LEN`] bytes.
    #[error("key of {len} bytes is too long: keys are at most 4096 bytes; hash or shorten it before enqueueing")]
    KeyTooLong {
        /// The offending key's length in bytes.
        len: usize,
    },
    /// A JSON value nested deeper than [`crate::MAX_DEPTH`].
    #[error("args nested deeper than {max} levels; flatten the args object")]
    TooDeep {
        /// The nesting limit.
        max: usize,
    },
    /// A `unique_states` bit string that is not exactly eight `0`/`1` characters.
    #[error("invalid unique_states bit string {0:?}: write exactly eight characters, each '0' or '1', leftmost = scheduled")]
    InvalidUniqueStates(String),
    /// A shard index outside 0..64 given to [`crate::move_shard`].
    #[error("invalid retained shard {0}: a stored enqueue_shard is in 0..=63")]
    InvalidShard(i64),
    /// The float encoder's digit extraction broke its own invariants for this value. No input
    /// is known to do this: it exists so that a bug refuses instead of writing plausible
    /// wrong bytes.
    #[error("cannot encode the float with bits {bits:#018x} as canonical JSON: the shortest-digit extraction failed its own checks; this is a bug in awa-conformance-core, please report it with these bits")]
    FloatDigits {
        /// `f64::to_bits` of the value.
        bits: u64,
    },
}
