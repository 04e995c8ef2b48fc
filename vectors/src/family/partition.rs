//! Family `partition`: released PartitionedQueue routing of an ordering key.

use awa_conformance_core as core;
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    check_core, dec, decimal, decode_input, hex_bytes, key_hex, opt_key, serde_part, FResult,
    FieldError,
};

/// `partition`: PartitionedQueue routing of an ordering key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// input `logical_queue`.
    pub logical_queue: String,
    /// input `partitions` (1..=32767).
    pub partitions: u16,
    /// intermediate `hash64`.
    pub hash64: u64,
    /// intermediate `partition_hash64`.
    pub partition_hash64: u64,
    /// expected `partition`.
    pub partition: u16,
    /// expected `physical_queue`.
    pub physical_queue: String,
}

impl Case {
    /// A `partition` case.
    ///
    /// # Errors
    /// [`core::Error::InvalidPartitions`] outside 1..=32767.
    pub fn partition(
        key: &[u8],
        logical_queue: &str,
        partitions: u16,
    ) -> Result<Self, core::Error> {
        let p = core::Partitions::new(i64::from(partitions))?;
        let partition = core::partition_for_ordering_key(key, p);
        Ok(Self::Partition(PartitionCase {
            key: key.to_vec(),
            logical_queue: logical_queue.to_owned(),
            partitions,
            hash64: core::ordering_key_hash64(key),
            partition_hash64: core::partition_hash64(key),
            partition,
            physical_queue: core::physical_queue_name(logical_queue, partition),
        }))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtIn {
    key_hex: String,
    logical_queue: String,
    partitions: u16,
}
/// A rejected input: the count unconstrained.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtInAny {
    key_hex: String,
    // Decoded so a misspelt member is an error; routing does not depend on it.
    #[serde(rename = "logical_queue")]
    _logical_queue: String,
    partitions: i64,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtMid {
    hash64: String,
    partition_hash64: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtEx {
    partition: u16,
    physical_queue: String,
}

/// The `partition` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::Partition;
    const NAME: &'static str = "partition";
    const PREFIX: &'static str = "pt";
    const HAS_INTERMEDIATE: bool = true;
    type Case = PartitionCase;

    fn input_json(c: &PartitionCase) -> Json {
        Json::obj([
            key_hex(&c.key),
            ("logical_queue", Json::str(&c.logical_queue)),
            ("partitions", Json::Int(i64::from(c.partitions))),
        ])
    }

    fn intermediate_json(c: &PartitionCase) -> Option<Json> {
        Some(Json::obj([
            ("hash64", dec(c.hash64)),
            ("partition_hash64", dec(c.partition_hash64)),
        ]))
    }

    fn expected_json(c: &PartitionCase) -> Json {
        Json::obj([
            ("partition", Json::Int(i64::from(c.partition))),
            ("physical_queue", Json::str(&c.physical_queue)),
        ])
    }

    fn recompute(c: &PartitionCase) -> Result<Case, core::Error> {
        Case::partition(&c.key, &c.logical_queue, c.partitions)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: PtIn = serde_part(input, "input")?;
        let mid: PtMid = serde_part(intermediate, "intermediate")?;
        let ex: PtEx = serde_part(expected, "expected")?;
        check_core(
            core::Partitions::new(i64::from(inp.partitions)),
            "input.partitions",
        )?;
        Ok(Case::Partition(PartitionCase {
            key: hex_bytes(&inp.key_hex, "input.key_hex")?,
            logical_queue: inp.logical_queue,
            partitions: inp.partitions,
            hash64: decimal(&mid.hash64, "intermediate.hash64")?,
            partition_hash64: decimal(&mid.partition_hash64, "intermediate.partition_hash64")?,
            partition: ex.partition,
            physical_queue: ex.physical_queue,
        }))
    }

    fn attempt(input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        let i: PtInAny = decode_input(input)?;
        opt_key(Some(&i.key_hex), "input.key_hex")?;
        let verdict = core::Partitions::new(i.partitions);
        Ok(crate::reject::refusal(verdict))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Released PartitionedQueue routing: SplitMix64 finaliser over ordering_key_hash64(key) XOR 0x9d4d1b2f53a70c91, mod the partition count; partition 0 is the logical queue, partition n is <logical>__p<n>.",
            || Ok(cases::v1()),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's partition (same rule): high-byte and Latin-1 keys, and refused partition counts.",
            || Ok(cases::v1_1()),
        )),
    };
}

/// The generator's cases, release by release (inputs only: outputs come from the core).
#[cfg(feature = "maintainer")]
mod cases {
    use crate::generate::{rejected, spec, Spec};
    use crate::model::Case;
    use crate::pretty::Json;
    use crate::Family;

    /// Release v1's cases, in file order (frozen: changing one moves a published byte).
    pub(super) fn v1() -> Vec<Spec> {
        let keys: [(&[u8], &str); 6] = [
            (b"", "empty key"),
            (b"a", "key \"a\""),
            (b"order-1", "key \"order-1\""),
            (b"customer:42", "key \"customer:42\""),
            ("日本".as_bytes(), "key \"日本\""),
            (&[0xff], "key 0xff"),
        ];
        let counts: [u16; 13] = [1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 100, 1000, 32767];
        let queues = ["orders", "payments", "email.outbound"];
        let mut out = Vec::new();
        for (ki, (k, kd)) in keys.iter().enumerate() {
            for (ci, n) in counts.iter().enumerate() {
                let q = queues
                    .get((ki + ci) % queues.len())
                    .copied()
                    .unwrap_or("orders");
                let mut tags = vec![];
                if *n == 1 {
                    tags.push("edge:single-partition");
                }
                if *n == 32767 {
                    tags.push("edge:max-partitions");
                }
                out.push(spec(
                    format!("{kd} over {n} partitions of {q:?}"),
                    &tags,
                    Case::partition(k, q, *n),
                ));
            }
        }
        out
    }

    /// Release v1.1's cases, in file order (frozen, like v1's).
    pub(super) fn v1_1() -> Vec<Spec> {
        let keys: [(&[u8], &str); 5] = [
            (&[0x80], "key 0x80"),
            (&[0xe9], "key 0xe9 (Latin-1 é)"),
            ("é".as_bytes(), "key \"é\" in UTF-8"),
            (&[0xc3], "key 0xc3 (not UTF-8)"),
            ("straße".as_bytes(), "key \"straße\""),
        ];
        let counts: [u16; 4] = [5, 255, 256, 32766];
        let mut out = Vec::new();
        for (ki, (k, kd)) in keys.iter().enumerate() {
            for (ci, n) in counts.iter().enumerate() {
                let q = if (ki + ci) % 2 == 0 {
                    "orders"
                } else {
                    "tenants.eu"
                };
                out.push(spec(
                    format!("{kd} over {n} partitions of {q:?}"),
                    &["keys:distinct"],
                    Case::partition(k, q, *n),
                ));
            }
        }
        let pt = |n: i64| {
            Json::obj([
                ("key_hex", Json::str("61")),
                ("logical_queue", Json::str("orders")),
                ("partitions", Json::Int(n)),
            ])
        };
        for (n, why) in [
            (0, "0 partitions"),
            (32768, "32768 partitions (one past the maximum)"),
            (-1, "-1 partitions"),
        ] {
            out.push(rejected(
                &format!("{why} are refused (invalid_partitions)"),
                &["error"],
                Family::Partition,
                pt(n),
            ));
        }
        out
    }
}
