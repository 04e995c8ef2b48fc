//! The nine vector families, their file names and ID prefixes (ADR 0002).

use std::fmt;

/// One vector family: one file `vectors/v1/<name>.json`, one ID prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// Awa canonical JSON v1 bytes of a typed value.
    CanonicalJson,
    /// The released BLAKE3 `unique_key`.
    UniqueKey,
    /// `ordering_key_hash64(key) mod width` at every width 1..=64.
    OrderingShard,
    /// PartitionedQueue routing of an ordering key.
    Partition,
    /// The domain-separated SHA-256 concurrency digest.
    ConcurrencyDigest,
    /// The concurrency digest's shard at every width 1..=64.
    ConcurrencyShard,
    /// Ordering key, else concurrency key, else rotor.
    RoutingPrecedence,
    /// `retained mod destination_width` on a cross-queue move.
    MoveShard,
    /// `unique_states` u8 mask ↔ `bit(8)` text.
    UniqueStates,
}

impl Family {
    /// Every family, in file-name order (the manifest's order).
    pub const ALL: [Family; 9] = [
        Family::CanonicalJson,
        Family::ConcurrencyDigest,
        Family::ConcurrencyShard,
        Family::MoveShard,
        Family::OrderingShard,
        Family::Partition,
        Family::RoutingPrecedence,
        Family::UniqueKey,
        Family::UniqueStates,
    ];

    /// The wire name (`unique_key`), also the file stem.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::CanonicalJson => "canonical_json",
            Self::UniqueKey => "unique_key",
            Self::OrderingShard => "ordering_shard",
            Self::Partition => "partition",
            Self::ConcurrencyDigest => "concurrency_digest",
            Self::ConcurrencyShard => "concurrency_shard",
            Self::RoutingPrecedence => "routing_precedence",
            Self::MoveShard => "move_shard",
            Self::UniqueStates => "unique_states",
        }
    }

    /// The two-letter ID prefix (`uk`).
    #[must_use]
    pub fn prefix(self) -> &'static str {
        match self {
            Self::CanonicalJson => "cj",
            Self::UniqueKey => "uk",
            Self::OrderingShard => "os",
            Self::Partition => "pt",
            Self::ConcurrencyDigest => "cd",
            Self::ConcurrencyShard => "cs",
            Self::RoutingPrecedence => "rp",
            Self::MoveShard => "ms",
            Self::UniqueStates => "us",
        }
    }

    /// The file name inside `vectors/v1/` (`unique_key.json`).
    #[must_use]
    pub fn file_name(self) -> String {
        format!("{}.json", self.as_str())
    }

    /// Parse a wire name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
