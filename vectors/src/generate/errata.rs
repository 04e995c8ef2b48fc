//! The v1.1 errata file: corrections of v1's frozen descriptions and tags (ADR 0020).

use crate::generate::{GenerateError, Generated};
use crate::pretty::Json;
use crate::Family;

/// The errata file: corrections of v1's frozen descriptions and tags, and how many.
///
/// # Errors
/// A corrected v1 vector (found by its frozen description) or the v1.1 vector it points to is
/// missing: the generator changed under the errata.
pub(crate) fn errata(v1: &Generated, v11: &Generated) -> Result<(Json, usize), GenerateError> {
    let find = |sets: &Generated, family: Family, description: &str| {
        sets.iter()
            .filter(|(f, _, _)| *f == family)
            .flat_map(|(_, _, vs)| vs)
            .find(|v| v.description.starts_with(description))
            .map(|v| v.id.clone())
            .ok_or_else(|| {
                GenerateError::Hazard(format!(
                    "the errata name a {family} vector described {description:?}, which no longer exists"
                ))
            })
    };
    let empty_kind = find(v1, Family::UniqueKey, "empty kind: insert_job rejects it")?;
    let duplicate = find(
        v1,
        Family::CanonicalJson,
        "duplicate keys: the last member wins",
    )?;
    let normative_duplicate = find(v11, Family::CanonicalJson, "duplicate keys (normative)")?;
    let entry = |id: String, description: String, tags: Option<&[&str]>, reason: &str| {
        let mut members = vec![
            ("id".to_owned(), Json::Str(id)),
            ("description".to_owned(), Json::Str(description)),
        ];
        if let Some(t) = tags {
            members.push((
                "tags".to_owned(),
                Json::Arr(t.iter().map(|x| Json::str(*x)).collect()),
            ));
        }
        members.push(("reason".to_owned(), Json::str(reason)));
        Json::Obj(members)
    };
    let entries = vec![
        entry(
            empty_kind,
            "empty kind: the hash is defined (the pre-image is empty); neither the reference insert_job nor released Awa 0.6.9 refuses kind ''".to_owned(),
            None,
            "The v1 description says insert_job rejects an empty kind with 23514. Neither the reference schema nor released Awa 0.6.9's insert_job_compat rejects '': an empty kind is stored like any other.",
        ),
        entry(
            duplicate,
            format!("duplicate keys: the last member wins (a normative rule of the contract; v1.1 adds the normative vector {normative_duplicate})"),
            Some(&["object", "object:duplicate-keys"]),
            "The v1 text calls the last-wins rule serde_json map semantics and tags it a hazard, but docs/contract.md states it normatively. The vector stays informative in v1 (its bytes are frozen); v1.1 adds normative duplicate-key vectors.",
        ),
    ];
    let count = entries.len();
    Ok((
        Json::obj([
            ("format", Json::str("awa-conformance-errata")),
            ("format_version", Json::Int(1)),
            (
                "description",
                Json::str("Corrections of frozen vectors' descriptions and tags; the vectors' bytes and IDs never change (ADR 0020). Applied by the runner and the bindings when they show a vector."),
            ),
            ("errata", Json::Arr(entries)),
        ]),
        count,
    ))
}
