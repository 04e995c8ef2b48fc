//! The coverage rule, one for adapters and producers: a program that declares a capability
//! (an adapter's family, a producer's `enqueue` / `errors` / `bulk`) and then skips every case
//! of it that ran checked nothing there, so it cannot be called conformant on it.
//!
//! Why "every": a program may skip single cases it cannot express (a skip is shown as not
//! applicable with its reason, and the report's counts show it); a capability with no answered
//! case at all is a hollow verdict.

use std::collections::BTreeMap;

use crate::outcome::CaseFailure;

/// What a program did with the cases of one declared capability that ran.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Cases it answered (whatever the verdict on the answer).
    pub answered: u64,
    /// Cases it skipped.
    pub skipped: u64,
}

/// The coverage verdict of `program` (e.g. `adapter foo`, `producer bar`) from its tallies,
/// keyed by declared capability; `unit` names what was skipped (`vectors`, `cases`).
///
/// # Errors
/// A finding naming every declared capability whose cases were all skipped, and the fix.
pub fn coverage(
    program: &str,
    unit: &str,
    tallies: &BTreeMap<String, Tally>,
) -> Result<(), CaseFailure> {
    let hollow: Vec<String> = tallies
        .iter()
        .filter(|(_, t)| t.answered == 0 && t.skipped > 0)
        .map(|(capability, t)| format!("{capability} ({} {unit})", t.skipped))
        .collect();
    if hollow.is_empty() {
        return Ok(());
    }
    Err(CaseFailure::new(format!(
        "{program} declares but skipped every {} of {}, so nothing was checked there; \
         implement it or stop declaring it",
        unit.trim_end_matches('s'),
        hollow.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tallies(rows: &[(&str, u64, u64)]) -> BTreeMap<String, Tally> {
        rows.iter()
            .map(|(c, answered, skipped)| {
                (
                    (*c).to_owned(),
                    Tally {
                        answered: *answered,
                        skipped: *skipped,
                    },
                )
            })
            .collect()
    }

    #[test]
    fn one_answer_per_capability_is_coverage() {
        assert!(coverage(
            "p",
            "cases",
            &tallies(&[("enqueue", 1, 99), ("bulk", 3, 0)])
        )
        .is_ok());
        // A capability none of whose cases ran (filtered out) says nothing either way.
        assert!(coverage("p", "cases", &tallies(&[("errors", 0, 0)])).is_ok());
    }

    #[test]
    fn a_capability_skipped_whole_is_named() {
        let err = coverage(
            "producer x",
            "cases",
            &tallies(&[("enqueue", 5, 0), ("errors", 0, 12), ("bulk", 0, 2)]),
        )
        .unwrap_err();
        assert!(
            err.message
                .contains("skipped every case of bulk (2 cases), errors (12 cases)"),
            "{}",
            err.message
        );
        assert!(err.message.starts_with("producer x declares"));
    }
}
