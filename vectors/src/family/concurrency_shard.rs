//! Family `concurrency_shard`: contract v1 D2, the concurrency digest's shard at every width.

use awa_conformance_core as core;
use awa_conformance_core::DIGEST_LEN;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::inputs::{key_specs, sha_boundary_specs};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::hex;
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    dec, decimal, hex_array, key_input, key_parts, shards_at_every_width, shards_expected, FResult,
    ShardsEx,
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
        key_input(&c.key)
    }

    fn intermediate_json(c: &ConcurrencyShardCase) -> Option<Json> {
        Some(Json::obj([
            ("digest_hex", Json::Str(hex::encode(&c.digest))),
            ("first8_u64", dec(c.first8_u64)),
        ]))
    }

    fn expected_json(c: &ConcurrencyShardCase) -> Json {
        shards_expected(&c.shards)
    }

    fn recompute(c: &ConcurrencyShardCase) -> Result<Case, core::Error> {
        Case::concurrency_shard(&c.key)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let (key, mid, ex): (_, CsMid, ShardsEx) = key_parts(input, intermediate, expected)?;
        Ok(Case::ConcurrencyShard(ConcurrencyShardCase {
            key,
            digest: hex_array(&mid.digest_hex, "intermediate.digest_hex")?,
            first8_u64: decimal(&mid.first8_u64, "intermediate.first8_u64")?,
            shards: ex.shards()?,
        }))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Contract v1 D2: the first 8 digest bytes as a big-endian u64, mod width; shards[i] at width i+1 for every width 1..=64.",
            || Ok(key_specs(false, Case::concurrency_shard)),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's concurrency_shard (same rule): the SHA-256 padding-boundary keys at every width 1..=64.",
            || Ok(sha_boundary_specs(Case::concurrency_shard)),
        )),
    };
}
