//! Family `unique_states`: released `unique_states`, a u8 mask and its `bit(8)` text.

use awa_conformance_core as core;
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{serde_part, FResult};

/// `unique_states`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueStatesCase {
    /// input `mask`.
    pub mask: u8,
    /// expected `bits` (8 chars, leftmost = scheduled).
    pub bits: String,
    /// expected `states` (names in enum order).
    pub states: Vec<String>,
}

impl Case {
    /// A `unique_states` case.
    #[must_use]
    pub fn unique_states(mask: u8) -> Self {
        let states = core::JOB_STATES
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1u8 << i) != 0)
            .map(|(_, s)| (*s).to_owned())
            .collect();
        Self::UniqueStates(UniqueStatesCase {
            mask,
            bits: core::unique_states_bits(mask),
            states,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsIn {
    mask: u8,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsEx {
    bits: String,
    states: Vec<String>,
}

/// The `unique_states` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::UniqueStates;
    const NAME: &'static str = "unique_states";
    const PREFIX: &'static str = "us";
    const HAS_INTERMEDIATE: bool = false;
    type Case = UniqueStatesCase;

    fn input_json(c: &UniqueStatesCase) -> Json {
        Json::obj([("mask", Json::Int(i64::from(c.mask)))])
    }

    fn expected_json(c: &UniqueStatesCase) -> Json {
        Json::obj([
            ("bits", Json::str(&c.bits)),
            (
                "states",
                Json::Arr(c.states.iter().map(Json::str).collect()),
            ),
        ])
    }

    fn recompute(c: &UniqueStatesCase) -> Result<Case, core::Error> {
        Ok(Case::unique_states(c.mask))
    }

    fn parse(
        input: Option<&serde_json::Value>,
        _intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: UsIn = serde_part(input, "input")?;
        let ex: UsEx = serde_part(expected, "expected")?;
        Ok(Case::UniqueStates(UniqueStatesCase {
            mask: inp.mask,
            bits: ex.bits,
            states: ex.states,
        }))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Released unique_states: bit i of the u8 mask is character i from the left of the bit(8) text and state JOB_STATES[i].",
            || Ok(cases::v1()),
        )),
        v1_1: None,
    };
}

/// The generator's cases (inputs only: outputs come from the core).
#[cfg(feature = "maintainer")]
mod cases {
    use awa_conformance_core as core;

    use crate::generate::{spec, Spec};
    use crate::model::Case;

    /// Release v1's cases, in file order (frozen: changing one moves a published byte).
    pub(super) fn v1() -> Vec<Spec> {
        (0..=255u8)
            .map(|m| {
                let mut tags = vec![];
                if m == core::DEFAULT_UNIQUE_STATES {
                    tags.push("default");
                }
                if m == 0 || m == 255 {
                    tags.push("edge:extreme");
                }
                spec(format!("mask {m:#04x}"), &tags, Ok(Case::unique_states(m)))
            })
            .collect()
    }
}
