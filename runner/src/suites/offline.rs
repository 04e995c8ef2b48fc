//! The offline suite: one trial per vector (normative and informative), named `family::id`,
//! checking that the reference core reproduces every stored intermediate and expected field.

use std::sync::Arc;

use awa_conformance_vectors::{check_vector, Family, Mismatch, Vector, VectorSet};
use libtest_mimic::Trial;

use crate::outcome::{CaseFailure, RunContext};

/// The `suite` string every offline trial records.
pub const SUITE: &str = "offline";

/// One trial per vector of `set`, in file order.
pub fn trials(ctx: &Arc<RunContext>, set: &VectorSet) -> Vec<Trial> {
    set.iter()
        .map(|(family, vector)| {
            let vector = vector.clone();
            ctx.pure_trial(SUITE, trial_name(family, &vector.id), move || {
                check(family, &vector).map(|()| crate::outcome::Verdict::Passed)
            })
        })
        .collect()
}

/// `family::id`, the name libtest filters on and the expected-failures file refers to.
pub fn trial_name(family: Family, id: &str) -> String {
    format!("{family}::{id}")
}

fn check(family: Family, vector: &Vector) -> Result<(), CaseFailure> {
    check_vector(family, vector).map_err(|m| failure(vector, &m))
}

/// A mismatch as a failure, keeping the values as JSON when they parse as JSON.
fn failure(vector: &Vector, m: &Mismatch) -> CaseFailure {
    let as_json = |text: &str| {
        serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
    };
    CaseFailure::mismatch(
        format!(
            "vector {} ({}): {}: the reference core does not reproduce the stored value; \
             the vector set or the core is wrong",
            m.vector_id,
            vector.status.as_str(),
            m.field
        ),
        as_json(&m.expected),
        as_json(&m.actual),
    )
}
