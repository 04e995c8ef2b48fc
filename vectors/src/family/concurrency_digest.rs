//! Family `concurrency_digest`: contract v1 D1, the domain-separated SHA-256 of a concurrency
//! key.

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
use crate::wire::{hex_array, hex_bytes, key_input, key_parts, FResult};

/// `concurrency_digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrencyDigestCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `preimage_hex`.
    pub preimage: Vec<u8>,
    /// expected `digest_hex`.
    pub digest: [u8; DIGEST_LEN],
}

impl Case {
    /// A `concurrency_digest` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn concurrency_digest(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        Ok(Self::ConcurrencyDigest(ConcurrencyDigestCase {
            key: key.to_vec(),
            preimage: core::concurrency_preimage(key),
            digest: core::concurrency_digest(key),
        }))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PreMid {
    preimage_hex: String,
}
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DigestEx {
    digest_hex: String,
}

/// The `concurrency_digest` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::ConcurrencyDigest;
    const NAME: &'static str = "concurrency_digest";
    const PREFIX: &'static str = "cd";
    const HAS_INTERMEDIATE: bool = true;
    type Case = ConcurrencyDigestCase;

    fn input_json(c: &ConcurrencyDigestCase) -> Json {
        key_input(&c.key)
    }

    fn intermediate_json(c: &ConcurrencyDigestCase) -> Option<Json> {
        Some(Json::obj([(
            "preimage_hex",
            Json::Str(hex::encode(&c.preimage)),
        )]))
    }

    fn expected_json(c: &ConcurrencyDigestCase) -> Json {
        Json::obj([("digest_hex", Json::Str(hex::encode(&c.digest)))])
    }

    fn recompute(c: &ConcurrencyDigestCase) -> Result<Case, core::Error> {
        Case::concurrency_digest(&c.key)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let (key, mid, ex): (_, PreMid, DigestEx) = key_parts(input, intermediate, expected)?;
        Ok(Case::ConcurrencyDigest(ConcurrencyDigestCase {
            key,
            preimage: hex_bytes(&mid.preimage_hex, "intermediate.preimage_hex")?,
            digest: hex_array(&ex.digest_hex, "expected.digest_hex")?,
        }))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Contract v1 D1: SHA-256(\"awa:concurrency_key:v1\" || 0x00 || key). The empty key is a key.",
            || Ok(key_specs(false, Case::concurrency_digest)),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's concurrency_digest (same rule): keys whose pre-images sit on SHA-256's padding and block boundaries (55/56, 63/64/65, 119/120, 127/128/129 bytes).",
            || Ok(sha_boundary_specs(Case::concurrency_digest)),
        )),
    };
}
