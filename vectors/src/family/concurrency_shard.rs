//! Family `concurrency_shard`: contract v1 D2, the concurrency digest's shard at every width.

use awa_conformance_core as core;
use awa_conformance_core::DIGEST_LEN;

use super::{Family, FamilyDef};
use crate::hex;
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    check_core, dec, decimal, hex_array, hex_bytes, key_hex, serde_part, shards,
    shards_at_every_width, shards_json, FResult, KeyIn, ShardsEx,
};

/// `concurrency_shard`: one key's digest at every width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrencyShardCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `digest_hex`.
    pub digest: [u8; DIGEST_LEN],
    /// intermediate `first8_u64`.
    pub first8_u64: u64,
    /// expected `shards`: `shards[i]` at width `i + 1`, 64 entries.
    pub shards: Vec<u8>,
}

fn first8(d: &[u8; DIGEST_LEN]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(d.get(..8).unwrap_or(&[0; 8]));
    u64::from_be_bytes(b)
}

impl Case {
    /// A `concurrency_shard` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn concurrency_shard(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        let digest = core::concurrency_digest(key);
        Ok(Self::ConcurrencyShard(ConcurrencyShardCase {
            key: key.to_vec(),
            digest,
            first8_u64: first8(&digest),
            shards: shards_at_every_width(|w| core::concurrency_shard(&digest, w))?,
        }))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CsMid {
    digest_hex: String,
    first8_u64: String,
}

/// The `concurrency_shard` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::ConcurrencyShard;
    const NAME: &'static str = "concurrency_shard";
    const PREFIX: &'static str = "cs";
    const HAS_INTERMEDIATE: bool = true;
    type Case = ConcurrencyShardCase;

    fn input_json(c: &ConcurrencyShardCase) -> Json {
        Json::obj([key_hex(&c.key)])
    }

    fn intermediate_json(c: &ConcurrencyShardCase) -> Option<Json> {
        Some(Json::obj([
            ("digest_hex", Json::Str(hex::encode(&c.digest))),
            ("first8_u64", dec(c.first8_u64)),
        ]))
    }

    fn expected_json(c: &ConcurrencyShardCase) -> Json {
        Json::obj([("shards", shards_json(&c.shards))])
    }

    fn recompute(c: &ConcurrencyShardCase) -> Result<Case, core::Error> {
        Case::concurrency_shard(&c.key)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: KeyIn = serde_part(input, "input")?;
        let mid: CsMid = serde_part(intermediate, "intermediate")?;
        let ex: ShardsEx = serde_part(expected, "expected")?;
        let key = hex_bytes(&inp.key_hex, "input.key_hex")?;
        check_core(core::validate_key(&key), "input.key_hex")?;
        Ok(Case::ConcurrencyShard(ConcurrencyShardCase {
            key,
            digest: hex_array(&mid.digest_hex, "intermediate.digest_hex")?,
            first8_u64: decimal(&mid.first8_u64, "intermediate.first8_u64")?,
            shards: shards(ex.shards, "expected.shards")?,
        }))
    }

    #[cfg(feature = "maintainer")]
    fn release(
        release: crate::generate::Release,
    ) -> Result<Option<crate::generate::FamilyRelease>, crate::generate::GenerateError> {
        use crate::generate::inputs::{key_specs, sha_boundary_specs};
        use crate::generate::{FamilyRelease, Release};
        Ok(Some(match release {
            Release::V1 => FamilyRelease::new(
                "Contract v1 D2: the first 8 digest bytes as a big-endian u64, mod width; shards[i] at width i+1 for every width 1..=64.",
                key_specs(false, Case::concurrency_shard),
            ),
            Release::V1_1 => FamilyRelease::new(
                "v1.1 additions to v1's concurrency_shard (same rule): the SHA-256 padding-boundary keys at every width 1..=64.",
                sha_boundary_specs(Case::concurrency_shard),
            ),
        }))
    }
}
