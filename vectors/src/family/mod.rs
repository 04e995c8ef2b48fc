//! The vector families: one module per family, each implementing [`FamilyDef`] (ADR 0043), and
//! the two dispatch tables that map a [`Family`] or a [`Case`] variant to its module.
//!
//! Adding a family: a module here, a variant of [`Family`] and of [`Case`], one line in
//! [`Family::ALL`], and one arm in each of `with_def!` and `with_case!` (the compiler points at
//! both when a variant is missing).

use std::fmt;

use awa_conformance_core as core;

use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{FResult, FieldError};

pub(crate) mod canonical_json;
pub(crate) mod concurrency_digest;
pub(crate) mod concurrency_shard;
pub(crate) mod move_shard;
pub(crate) mod ordering_shard;
pub(crate) mod partition;
pub(crate) mod routing_precedence;
pub(crate) mod unique_key;
pub(crate) mod unique_states;

/// One vector family: one file `<release>/<name>.json` per release that has vectors of it, one
/// ID prefix.
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

/// Everything about one family: its case type, wire shape (`input` / `intermediate` /
/// `expected`), parsing, the inputs it refuses, and (with `maintainer`) its generator cases per
/// release. Implemented by the unit struct `Def` of each module of `family/`.
pub(crate) trait FamilyDef {
    /// The family.
    const FAMILY: Family;
    /// The wire name and file stem (`unique_key`).
    const NAME: &'static str;
    /// The two-letter ID prefix (`uk`, ADR 0015).
    const PREFIX: &'static str;
    /// Whether its vectors carry an `intermediate` object (ADR 0002's table).
    const HAS_INTERMEDIATE: bool;

    /// The typed case (`UniqueKeyCase`), a variant of [`Case`].
    type Case;

    /// The `input` object as written in a file.
    fn input_json(c: &Self::Case) -> Json;
    /// The `intermediate` object (`Some` exactly when [`Self::HAS_INTERMEDIATE`]).
    fn intermediate_json(_c: &Self::Case) -> Option<Json> {
        None
    }
    /// The `expected` object as written in a file.
    fn expected_json(c: &Self::Case) -> Json;
    /// The same input with every other field computed by the core.
    ///
    /// # Errors
    /// The core's error for an input it rejects.
    fn recompute(c: &Self::Case) -> Result<Case, core::Error>;
    /// Decode a vector's members (an accepted input; rejected ones go to [`Self::attempt`]).
    ///
    /// # Errors
    /// The first member that does not decode, with its JSON path.
    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case>;
    /// Decode a rejected-input vector's `input` (integers unconstrained) and run the core on
    /// it: `Ok(Some(code))` when the core refuses it, `Ok(None)` when it accepts it.
    ///
    /// # Errors
    /// The input does not decode, or the family has no rejected form (the default).
    fn attempt(_input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        Err(FieldError::new(
            "expected.error",
            format!(
                "{} vectors have no rejected form (every input is valid)",
                Self::NAME
            ),
        ))
    }
    /// The family's file in each release: its envelope description and its cases in file
    /// order (`None` where the release adds nothing to the family).
    #[cfg(feature = "maintainer")]
    const RELEASES: crate::generate::Releases;
}

/// Dispatch on a [`Family`]: `with_def!(family, D => expr)` evaluates `expr` with `D` bound to
/// that family's `Def` type. One of the two places that list every family.
macro_rules! with_def {
    ($family:expr, $d:ident => $body:expr) => {
        match $family {
            $crate::Family::CanonicalJson => {
                use $crate::family::canonical_json::Def as $d;
                $body
            }
            $crate::Family::UniqueKey => {
                use $crate::family::unique_key::Def as $d;
                $body
            }
            $crate::Family::OrderingShard => {
                use $crate::family::ordering_shard::Def as $d;
                $body
            }
            $crate::Family::Partition => {
                use $crate::family::partition::Def as $d;
                $body
            }
            $crate::Family::ConcurrencyDigest => {
                use $crate::family::concurrency_digest::Def as $d;
                $body
            }
            $crate::Family::ConcurrencyShard => {
                use $crate::family::concurrency_shard::Def as $d;
                $body
            }
            $crate::Family::RoutingPrecedence => {
                use $crate::family::routing_precedence::Def as $d;
                $body
            }
            $crate::Family::MoveShard => {
                use $crate::family::move_shard::Def as $d;
                $body
            }
            $crate::Family::UniqueStates => {
                use $crate::family::unique_states::Def as $d;
                $body
            }
        }
    };
}
pub(crate) use with_def;

/// Dispatch on a [`Case`]: `with_case!(case, c, D => expr, r => rejected_expr)` evaluates
/// `expr` with `c` bound to the typed case and `D` to its family's `Def`, or `rejected_expr`
/// with `r` bound to a [`crate::RejectedCase`]. The other place that lists every family.
macro_rules! with_case {
    ($case:expr, $c:ident, $d:ident => $body:expr, $r:ident => $rejected:expr) => {
        match $case {
            $crate::Case::CanonicalJson($c) => {
                use $crate::family::canonical_json::Def as $d;
                $body
            }
            $crate::Case::UniqueKey($c) => {
                use $crate::family::unique_key::Def as $d;
                $body
            }
            $crate::Case::OrderingShard($c) => {
                use $crate::family::ordering_shard::Def as $d;
                $body
            }
            $crate::Case::Partition($c) => {
                use $crate::family::partition::Def as $d;
                $body
            }
            $crate::Case::ConcurrencyDigest($c) => {
                use $crate::family::concurrency_digest::Def as $d;
                $body
            }
            $crate::Case::ConcurrencyShard($c) => {
                use $crate::family::concurrency_shard::Def as $d;
                $body
            }
            $crate::Case::RoutingPrecedence($c) => {
                use $crate::family::routing_precedence::Def as $d;
                $body
            }
            $crate::Case::MoveShard($c) => {
                use $crate::family::move_shard::Def as $d;
                $body
            }
            $crate::Case::UniqueStates($c) => {
                use $crate::family::unique_states::Def as $d;
                $body
            }
            $crate::Case::Rejected($r) => $rejected,
        }
    };
}
pub(crate) use with_case;

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
        with_def!(self, D => <D as FamilyDef>::NAME)
    }

    /// The two-letter ID prefix (`uk`).
    #[must_use]
    pub fn prefix(self) -> &'static str {
        with_def!(self, D => <D as FamilyDef>::PREFIX)
    }

    /// The file name inside a release directory (`unique_key.json`).
    #[must_use]
    pub fn file_name(self) -> String {
        format!("{}.json", self.as_str())
    }

    /// Parse a wire name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// Whether the family's vectors carry an `intermediate` object.
    pub(crate) fn has_intermediate(self) -> bool {
        with_def!(self, D => <D as FamilyDef>::HAS_INTERMEDIATE)
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::{Family, FamilyDef};

    #[test]
    fn every_module_names_its_own_family_and_all_is_in_file_name_order() {
        for f in Family::ALL {
            assert_eq!(with_def!(f, D => <D as FamilyDef>::FAMILY), f);
            assert_eq!(Family::parse(f.as_str()), Some(f));
        }
        let names: Vec<&str> = Family::ALL.iter().map(|f| f.as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
        let mut prefixes: Vec<&str> = Family::ALL.iter().map(|f| f.prefix()).collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        assert_eq!(prefixes.len(), Family::ALL.len());
    }

    #[test]
    fn has_intermediate_agrees_with_every_embedded_vector() {
        let set = crate::embedded().expect("the embedded releases load");
        let mut seen = std::collections::HashSet::new();
        for (family, v) in set.iter() {
            if matches!(v.case, crate::Case::Rejected(_)) {
                assert!(v.case.intermediate_json().is_none(), "{}", v.id);
                continue;
            }
            assert_eq!(
                v.case.intermediate_json().is_some(),
                family.has_intermediate(),
                "{}",
                v.id
            );
            assert_eq!(v.case.family(), family, "{}", v.id);
            seen.insert(family);
        }
        assert_eq!(seen.len(), Family::ALL.len());
    }
}
