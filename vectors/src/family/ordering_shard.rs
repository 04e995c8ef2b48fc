//! Family `ordering_shard`: released `ordering_key_hash64(key) mod width` at every width.

use awa_conformance_core as core;

use super::{Family, FamilyDef};
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    check_core, dec, decimal, hex_bytes, key_hex, serde_part, shards, shards_at_every_width,
    shards_json, FResult, KeyIn, ShardsEx,
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
        Json::obj([key_hex(&c.key)])
    }

    fn intermediate_json(c: &OrderingShardCase) -> Option<Json> {
        Some(Json::obj([("hash64", dec(c.hash64))]))
    }

    fn expected_json(c: &OrderingShardCase) -> Json {
        Json::obj([("shards", shards_json(&c.shards))])
    }

    fn recompute(c: &OrderingShardCase) -> Result<Case, core::Error> {
        Case::ordering_shard(&c.key)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: KeyIn = serde_part(input, "input")?;
        let mid: Hash64Mid = serde_part(intermediate, "intermediate")?;
        let ex: ShardsEx = serde_part(expected, "expected")?;
        let key = hex_bytes(&inp.key_hex, "input.key_hex")?;
        check_core(core::validate_key(&key), "input.key_hex")?;
        Ok(Case::OrderingShard(OrderingShardCase {
            key,
            hash64: decimal(&mid.hash64, "intermediate.hash64")?,
            shards: shards(ex.shards, "expected.shards")?,
        }))
    }

    #[cfg(feature = "maintainer")]
    fn release(
        release: crate::generate::Release,
    ) -> Result<Option<crate::generate::FamilyRelease>, crate::generate::GenerateError> {
        use crate::generate::{inputs::key_specs, FamilyRelease, Release};
        Ok(match release {
            Release::V1 => Some(FamilyRelease::new(
                "Released ordering-key shard: h = 0xcbf29ce484222325; h = h*0x100000001b3 + byte (mod 2^64, multiply then add); shards[i] = h mod (i+1) for every width 1..=64.",
                key_specs(true, Case::ordering_shard),
            )),
            Release::V1_1 => None,
        })
    }
}
