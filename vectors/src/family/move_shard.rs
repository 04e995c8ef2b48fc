//! Family `move_shard`: contract v1 D4, a moved job keeps `retained_shard mod destination_width`.

use awa_conformance_core as core;
use awa_conformance_core::Width;
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{check_core, decode_input, ferr, serde_part, width, FResult, FieldError};

/// `move_shard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveShardCase {
    /// input `retained_shard` (0..=63).
    pub retained_shard: u8,
    /// input `destination_width` (1..=64).
    pub destination_width: u8,
    /// expected `shard`.
    pub shard: u8,
}

impl Case {
    /// A `move_shard` case.
    ///
    /// # Errors
    /// Invalid retained shard or destination width.
    pub fn move_shard(retained_shard: u8, destination_width: u8) -> Result<Self, core::Error> {
        let shard = core::move_shard(i64::from(retained_shard), width(destination_width)?)?;
        Ok(Self::MoveShard(MoveShardCase {
            retained_shard,
            destination_width,
            shard,
        }))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsIn {
    retained_shard: u8,
    destination_width: u8,
}
/// A rejected input: integers unconstrained.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsInAny {
    retained_shard: i64,
    destination_width: i64,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsEx {
    shard: u8,
}

/// The `move_shard` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::MoveShard;
    const NAME: &'static str = "move_shard";
    const PREFIX: &'static str = "ms";
    const HAS_INTERMEDIATE: bool = false;
    type Case = MoveShardCase;

    fn input_json(c: &MoveShardCase) -> Json {
        Json::obj([
            ("retained_shard", Json::Int(i64::from(c.retained_shard))),
            (
                "destination_width",
                Json::Int(i64::from(c.destination_width)),
            ),
        ])
    }

    fn expected_json(c: &MoveShardCase) -> Json {
        Json::obj([("shard", Json::Int(i64::from(c.shard)))])
    }

    fn recompute(c: &MoveShardCase) -> Result<Case, core::Error> {
        Case::move_shard(c.retained_shard, c.destination_width)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        _intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: MsIn = serde_part(input, "input")?;
        let ex: MsEx = serde_part(expected, "expected")?;
        check_core(width(inp.destination_width), "input.destination_width")?;
        check_core(
            core::move_shard(
                i64::from(inp.retained_shard),
                Width::new(1).map_err(|x| ferr("input", x.to_string()))?,
            ),
            "input.retained_shard",
        )?;
        Ok(Case::MoveShard(MoveShardCase {
            retained_shard: inp.retained_shard,
            destination_width: inp.destination_width,
            shard: ex.shard,
        }))
    }

    fn attempt(input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        let i: MsInAny = decode_input(input)?;
        let verdict = core::Width::new(i.destination_width)
            .and_then(|w| core::move_shard(i.retained_shard, w));
        Ok(crate::reject::refusal(verdict))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Contract v1 D4: a moved job keeps retained_shard mod destination_width.",
            || Ok(cases::v1()),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's move_shard (same rule): refused retained shards and destination widths.",
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
        let dests = [1u8, 2, 3, 7, 8, 16, 31, 32, 63, 64];
        (0u8..64)
            .flat_map(|r| {
                dests.iter().map(move |d| {
                    spec(
                        format!("retained shard {r} moved to width {d}"),
                        &[],
                        Case::move_shard(r, *d),
                    )
                })
            })
            .collect()
    }

    /// Release v1.1's cases, in file order (frozen, like v1's).
    pub(super) fn v1_1() -> Vec<Spec> {
        let ms = |r: i64, d: i64| {
            Json::obj([
                ("retained_shard", Json::Int(r)),
                ("destination_width", Json::Int(d)),
            ])
        };
        vec![
            rejected(
                "retained shard 64 is refused (invalid_shard: a stored shard is 0..=63)",
                &["error"],
                Family::MoveShard,
                ms(64, 8),
            ),
            rejected(
                "retained shard -1 is refused (invalid_shard)",
                &["error"],
                Family::MoveShard,
                ms(-1, 8),
            ),
            rejected(
                "destination width 0 is refused (invalid_width)",
                &["error"],
                Family::MoveShard,
                ms(3, 0),
            ),
            rejected(
                "destination width 65 is refused (invalid_width)",
                &["error"],
                Family::MoveShard,
                ms(3, 65),
            ),
        ]
    }
}
