//! Typed vectors: metadata plus a [`Case`], whose variants are the family modules' case types
//! (`vectors/src/family/`); every per-family operation dispatches through `FamilyDef`.

use awa_conformance_core as core;

use crate::family::{with_case, with_def, FamilyDef};
use crate::pretty::Json;
use crate::wire::{ferr, FResult};
use crate::{
    CanonicalJsonCase, ConcurrencyDigestCase, ConcurrencyShardCase, Family, MoveShardCase,
    OrderingShardCase, PartitionCase, RoutingPrecedenceCase, UniqueKeyCase, UniqueStatesCase,
};

/// Whether a producer must reproduce a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// A producer must reproduce it.
    Normative,
    /// Documents a released hazard; still checked against the reference core.
    Informative,
}

impl Status {
    /// The wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normative => "normative",
            Self::Informative => "informative",
        }
    }
}

/// One vector: metadata plus the family-specific case.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// `<prefix>-<12 hex>`, content-addressed (ADR 0001 D8).
    pub id: String,
    /// One line.
    pub description: String,
    /// Normative or informative.
    pub status: Status,
    /// Sorted tags such as `edge:empty` or `hazard:field-ambiguity`.
    pub tags: Vec<String>,
    /// Input, intermediate layers and expected output.
    pub case: Case,
    /// The reason of the erratum that corrected `description` / `tags` (the file keeps the
    /// frozen text; see `vectors/v1.1/errata.json`), or `None`.
    pub erratum: Option<String>,
}

/// The family-specific content of a vector.
#[derive(Debug, Clone, PartialEq)]
pub enum Case {
    /// `canonical_json`.
    CanonicalJson(CanonicalJsonCase),
    /// `unique_key`.
    UniqueKey(UniqueKeyCase),
    /// `ordering_shard`.
    OrderingShard(OrderingShardCase),
    /// `partition`.
    Partition(PartitionCase),
    /// `concurrency_digest`.
    ConcurrencyDigest(ConcurrencyDigestCase),
    /// `concurrency_shard`.
    ConcurrencyShard(ConcurrencyShardCase),
    /// `routing_precedence`.
    RoutingPrecedence(RoutingPrecedenceCase),
    /// `move_shard`.
    MoveShard(MoveShardCase),
    /// `unique_states`.
    UniqueStates(UniqueStatesCase),
    /// An input the contract refuses (any family with a rejected form, v1.1 on).
    Rejected(RejectedCase),
}

/// A rejected input: the producer must refuse it with the stable error code
/// (`expected: {"error": "<code>"}`; the codes are [`crate::ERROR_CODES`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RejectedCase {
    /// The family whose function is given the input.
    pub family: Family,
    /// The `input` object, members in write order.
    pub input: Json,
    /// The error code the core raises for it (`None`: the core accepted the input).
    pub error: Option<String>,
}

impl Case {
    /// The family this case belongs to.
    #[must_use]
    pub fn family(&self) -> Family {
        with_case!(self, _c, D => <D as FamilyDef>::FAMILY, r => r.family)
    }

    /// A rejected-input case for `family`: the core is run on `input` and the error code it
    /// raises recorded (`error: None` when it accepts the input, which a generator must refuse).
    ///
    /// # Errors
    /// The input does not decode as `family`'s input (a bug in the case definition).
    pub fn rejected(family: Family, input: Json) -> Result<Self, String> {
        let error = crate::reject::attempt(family, &input.to_serde())
            .map_err(|f| format!("{}: {}", f.path, f.message))?
            .map(str::to_owned);
        Ok(Self::Rejected(RejectedCase {
            family,
            input,
            error,
        }))
    }

    /// The same input with every intermediate and expected field recomputed by the core.
    ///
    /// # Errors
    /// The core's error for an input it rejects.
    pub fn recompute(&self) -> Result<Self, core::Error> {
        with_case!(self, c, D => <D as FamilyDef>::recompute(c), c => Ok(Self::Rejected(RejectedCase {
            family: c.family,
            input: c.input.clone(),
            error: match crate::reject::attempt(c.family, &c.input.to_serde()) {
                Ok(code) => code.map(str::to_owned),
                Err(f) => Some(format!("(undecodable input: {}: {})", f.path, f.message)),
            },
        })))
    }

    /// The `input` object as written in a file.
    #[must_use]
    pub fn input_json(&self) -> Json {
        with_case!(self, c, D => <D as FamilyDef>::input_json(c), r => r.input.clone())
    }

    /// The `intermediate` object, for the families that have one.
    #[must_use]
    pub fn intermediate_json(&self) -> Option<Json> {
        with_case!(self, c, D => <D as FamilyDef>::intermediate_json(c), _r => None)
    }

    /// The `expected` object as written in a file.
    #[must_use]
    pub fn expected_json(&self) -> Json {
        with_case!(
            self,
            c,
            D => <D as FamilyDef>::expected_json(c),
            r => Json::obj([("error", Json::opt_str(r.error.clone()))])
        )
    }
}

impl Vector {
    /// The vector object as written in a file (keys in ADR 0002 order).
    #[must_use]
    pub fn to_json(&self) -> Json {
        let mut m = vec![
            ("id".to_owned(), Json::str(&self.id)),
            ("description".to_owned(), Json::str(&self.description)),
            ("status".to_owned(), Json::str(self.status.as_str())),
            (
                "tags".to_owned(),
                Json::Arr(self.tags.iter().map(Json::str).collect()),
            ),
            ("input".to_owned(), self.case.input_json()),
        ];
        if let Some(i) = self.case.intermediate_json() {
            m.push(("intermediate".to_owned(), i));
        }
        m.push(("expected".to_owned(), self.case.expected_json()));
        Json::Obj(m)
    }
}

// ---- parsing (file JSON → typed case) ----

/// Decode a vector's `input` / `intermediate` / `expected` members for `family`.
pub(crate) fn parse_case(
    family: Family,
    input: Option<&serde_json::Value>,
    intermediate: Option<&serde_json::Value>,
    expected: Option<&serde_json::Value>,
) -> FResult<Case> {
    if !family.has_intermediate() && intermediate.is_some() {
        return Err(ferr(
            "intermediate",
            format!("{family} vectors have no intermediate layer; remove the member"),
        ));
    }
    if let Some(error) = expected.and_then(|x| x.get("error")) {
        return parse_rejected(family, input, intermediate, expected, error);
    }
    with_def!(family, D => <D as FamilyDef>::parse(input, intermediate, expected))
}

/// A rejected-input vector: `expected` is exactly `{"error": "<code>"}`, no intermediate, and
/// the input decodes as the family's (the core's verdict is left to `check_vector`).
fn parse_rejected(
    family: Family,
    input: Option<&serde_json::Value>,
    intermediate: Option<&serde_json::Value>,
    expected: Option<&serde_json::Value>,
    error: &serde_json::Value,
) -> FResult<Case> {
    if intermediate.is_some() {
        return Err(ferr(
            "intermediate",
            "a rejected-input vector has no intermediate layer; remove the member",
        ));
    }
    if expected
        .and_then(serde_json::Value::as_object)
        .map(serde_json::Map::len)
        != Some(1)
    {
        return Err(ferr(
            "expected",
            "a rejected-input vector's expected object has exactly one member, \"error\"",
        ));
    }
    let code = error
        .as_str()
        .filter(|c| crate::reject::ERROR_CODES.contains(c))
        .ok_or_else(|| {
            ferr(
                "expected.error",
                format!(
                    "{error} is not one of the error codes {:?}",
                    crate::reject::ERROR_CODES
                ),
            )
        })?;
    let input = input.ok_or_else(|| ferr("input", "missing member \"input\""))?;
    crate::reject::attempt(family, input)?;
    Ok(Case::Rejected(RejectedCase {
        family,
        input: Json::from_serde(input),
        error: Some(code.to_owned()),
    }))
}
