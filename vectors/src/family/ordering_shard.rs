//! Family `ordering_shard`: released `ordering_key_hash64(key) mod width` at every width.

use awa_conformance_core as core;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::inputs::key_specs;
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    dec, decimal, key_input, key_parts, shards_at_every_width, shards_expected, FResult, ShardsEx,
};

/// `ordering_shard`: one key at every width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderingShardCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `hash64`.
    pub hash64: u64,
    /// expected `shards`: `shards[i]` at width `i + 1`, 64 entries.
    pub shards: Vec<u8>,
}

impl Case {
    /// An `ordering_shard` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn ordering_shard(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        Ok(Self::OrderingShard(OrderingShardCase {
            key: key.to_vec(),
            hash64: core::ordering_key_hash64(key),
            shards: shards_at_every_width(|w| core::ordering_shard(key, w))?,
        }))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Hash64Mid {
    hash64: String,
}

/// The `ordering_shard` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::OrderingShard;
    const NAME: &'static str = "ordering_shard";
    const PREFIX: &'static str = "os";
    const HAS_INTERMEDIATE: bool = true;
    type Case = OrderingShardCase;

    fn input_json(c: &OrderingShardCase) -> Json {
        key_input(&c.key)
    }

    fn intermediate_json(c: &OrderingShardCase) -> Option<Json> {
        Some(Json::obj([("hash64", dec(c.hash64))]))
    }

    fn expected_json(c: &OrderingShardCase) -> Json {
        shards_expected(&c.shards)
    }

    fn recompute(c: &OrderingShardCase) -> Result<Case, core::Error> {
        Case::ordering_shard(&c.key)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let (key, mid, ex): (_, Hash64Mid, ShardsEx) = key_parts(input, intermediate, expected)?;
        Ok(Case::OrderingShard(OrderingShardCase {
            key,
            hash64: decimal(&mid.hash64, "intermediate.hash64")?,
            shards: ex.shards()?,
        }))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Released ordering-key shard: h = 0xcbf29ce484222325; h = h*0x100000001b3 + byte (mod 2^64, multiply then add); shards[i] = h mod (i+1) for every width 1..=64.",
            || Ok(key_specs(true, Case::ordering_shard)),
        )),
        v1_1: None,
    };
}
