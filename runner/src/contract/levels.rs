//! Conformance levels of a database (docs/contract.md §12): the mandatory core that every
//! database is checked for whatever it advertises, and the optional features that
//! `contract_capabilities()` may add.
//!
//! The advertised list only gates *optional* features: a mandatory capability missing from
//! the list is itself nonconformant (`sql::catalog::core_capabilities`), and its cases still
//! run, so an empty list can never turn a broken database into "not applicable".

use crate::contract::features::Feature;

/// Capabilities every database must have and advertise: routing (the four routing families),
/// the `job_routing` read function and `opts` expectations. The stable errors are core too;
/// they are not a capability and are always checked.
pub const CORE: [&str; 6] = [
    "concurrency_digest",
    "concurrency_shard",
    "expectations",
    "job_routing",
    "ordering_shard",
    "routing_precedence",
];

/// An optional level: a name, the capabilities that together advertise it, and the feature
/// its cases check ([`crate::contract::features`]; the level is what a database advertises,
/// the feature what a run checked).
#[derive(Debug, Clone, Copy)]
pub struct Optional {
    /// The level's name (`core+uniqueness`).
    pub name: &'static str,
    /// Every capability it needs, sorted.
    pub capabilities: &'static [&'static str],
    /// The feature a case needing one of these capabilities checks.
    pub feature: Feature,
}

/// The optional features of a database, in the order a level names them.
pub const OPTIONAL: [Optional; 4] = [
    Optional {
        name: "uniqueness",
        capabilities: &["unique_key", "unique_states"],
        feature: Feature::Uniqueness,
    },
    Optional {
        name: "move_shard",
        capabilities: &["move_shard"],
        feature: Feature::MoveShard,
    },
    // The staged bulk path (docs/contract.md §14): `publish_batch` and its staging table.
    Optional {
        name: "bulk",
        capabilities: &["bulk"],
        feature: Feature::Bulk,
    },
    // Contract revision 1.2 (ADR 0052): `job_stored`, the whole stored job, so the payload
    // (kind, args, tags, metadata, attempts, run_at) is judged; without it the level does not
    // claim it, and the payload cases are not applicable with the reason.
    Optional {
        name: "payload",
        capabilities: &["job_stored"],
        feature: Feature::Payload,
    },
];

/// The feature of the optional `capability`'s level; `None` for a core capability (its cases
/// check the feature their suite names) or an unknown one.
#[must_use]
pub fn feature_of(capability: &str) -> Option<Feature> {
    OPTIONAL
        .iter()
        .find(|o| o.capabilities.contains(&capability))
        .map(|o| o.feature)
}

/// Whether `capability` is in the mandatory core (never a reason for "not applicable").
#[must_use]
pub fn is_core(capability: &str) -> bool {
    CORE.contains(&capability)
}

/// The mandatory capabilities `advertised` lacks, in [`CORE`] order.
#[must_use]
pub fn missing_core(advertised: &[String]) -> Vec<&'static str> {
    CORE.iter()
        .copied()
        .filter(|c| !advertised.iter().any(|a| a == c))
        .collect()
}

/// The level a run checks: `core`, then `+feature` for each optional feature whose
/// capabilities are all advertised, then `+capability` for each capability of a feature that
/// is only partly advertised (its cases run; the feature is not claimed).
#[must_use]
pub fn level(advertised: &[String]) -> String {
    let has = |c: &str| advertised.iter().any(|a| a == c);
    let mut out = "core".to_owned();
    for f in OPTIONAL {
        if f.capabilities.iter().all(|c| has(c)) {
            out.push('+');
            out.push_str(f.name);
        } else {
            for c in f.capabilities.iter().filter(|c| has(c)) {
                out.push('+');
                out.push_str(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn empty_list_lacks_the_whole_core_and_checks_core() {
        assert_eq!(missing_core(&[]), CORE.to_vec());
        assert_eq!(level(&[]), "core");
    }

    #[test]
    fn levels_name_complete_features_and_partial_capabilities() {
        let mut all = caps(&CORE);
        all.extend(caps(&["move_shard", "unique_key", "unique_states"]));
        assert!(missing_core(&all).is_empty());
        assert_eq!(level(&all), "core+uniqueness+move_shard");
        all.push("bulk".to_owned());
        assert_eq!(level(&all), "core+uniqueness+move_shard+bulk");
        all.push("job_stored".to_owned());
        assert_eq!(level(&all), "core+uniqueness+move_shard+bulk+payload");
        assert_eq!(level(&caps(&["unique_key"])), "core+unique_key");
        assert_eq!(level(&caps(&["move_shard", "bogus"])), "core+move_shard");
        assert_eq!(
            missing_core(&caps(&["concurrency_digest", "expectations"])),
            vec![
                "concurrency_shard",
                "job_routing",
                "ordering_shard",
                "routing_precedence"
            ]
        );
    }

    #[test]
    fn core_and_optional_are_disjoint() {
        for f in OPTIONAL {
            for c in f.capabilities {
                assert!(!is_core(c), "{c}");
            }
        }
    }
}
