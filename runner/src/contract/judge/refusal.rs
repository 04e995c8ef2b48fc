//! The refusal rules: which refusal a request must get (the producer engine: by the database
//! or client-side), and the fields of a database error against the error table (the SQL
//! suites: SQLSTATE, message, hint, DETAIL members).

use serde_json::{json, Value as Json};

use super::is_harness_error;
use crate::contract::target::DbSetup;
use crate::outcome::CaseFailure;

/// Classify a query error: no server error, or a harness SQLSTATE ([`is_harness_error`]), is
/// the harness's fault; otherwise it is a finding about the implementation under test.
pub fn query_fail(db: &DbSetup, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
    let text = db.pg.describe(e);
    if is_harness_error(e) {
        let cause = super::harness_cause(e.code().map(tokio_postgres::error::SqlState::code));
        CaseFailure::harness(format!(
            "{what}: {cause}, not a finding about the database: {text}; check the server and \
             rerun"
        ))
    } else {
        CaseFailure::new(format!("{what} failed: {text}"))
    }
}

/// A refusal the contract requires, by the database (SQLSTATE) or, where the contract allows
/// it, by the client before the call (the same error code, SQLSTATE null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A second job whose unique claim is taken: `23505` (no client-side form: only the
    /// database knows the claims).
    Duplicate,
    /// A key over 4096 bytes: `ZA003`, or client-side `key_too_long`.
    KeyTooLong,
    /// `unique_states` that is not 8 bits: `22026`, or client-side `unique_states_not_8_bits`.
    UniqueStatesNot8Bits,
    /// A kind, queue, priority, max_attempts or tags just outside its domain: `23514`, the
    /// released validation (no client-side form: the contract keeps one set of bounds, the
    /// database's).
    OutOfDomain,
}

impl Refusal {
    /// Whether a refusal with `sqlstate` (`None`: client-side) and `code` is this one.
    #[must_use]
    pub fn admits(self, sqlstate: Option<&str>, code: Option<&str>) -> bool {
        match self {
            Self::Duplicate => sqlstate == Some("23505"),
            Self::KeyTooLong => {
                sqlstate == Some("ZA003") || (sqlstate.is_none() && code == Some("key_too_long"))
            }
            Self::UniqueStatesNot8Bits => {
                sqlstate == Some("22026")
                    || (sqlstate.is_none() && code == Some("unique_states_not_8_bits"))
            }
            Self::OutOfDomain => sqlstate == Some("23514"),
        }
    }

    /// Why a request this rule refuses was accepted and stored, as a producer's finding:
    /// its layer and sentence. `states` is the request's `unique_states`, `stored` the
    /// stored job's, `repeated` whether the answered id was answered before in the case (a
    /// duplicate answered with the first job's id). Every rule has its own sentence, so a new
    /// rule does not compile until it has one.
    #[must_use]
    pub fn accepted(
        self,
        job_id: i64,
        states: Option<&str>,
        stored_states: Option<&str>,
        repeated: bool,
    ) -> (super::Layer, String) {
        use super::Layer;
        match self {
            Self::Duplicate if repeated => (
                Layer::Payload,
                format!(
                    "the producer answered the first job's id {job_id} for the duplicate \
                     instead of refusing it (a swallowed 23505: ON CONFLICT, or a caught error \
                     answered with the existing job)"
                ),
            ),
            Self::Duplicate => (
                Layer::SqlCallEncoding,
                "the duplicate was accepted although insert_job refuses the same request: the \
                 producer sent another unique key or states"
                    .to_owned(),
            ),
            Self::UniqueStatesNot8Bits => (
                Layer::SqlCallEncoding,
                format!(
                    "unique_states '{}' was accepted and stored as {:?} (a ::bit(8) cast padded \
                     or truncated it; bind text through ::varbit so the database refuses it, or \
                     refuse it client-side)",
                    states.unwrap_or("NULL"),
                    stored_states.unwrap_or("NULL")
                ),
            ),
            Self::KeyTooLong => (
                Layer::SqlCallEncoding,
                "a key over 4096 bytes was accepted although insert_job refuses it: the \
                 producer sent other bytes (truncated?)"
                    .to_owned(),
            ),
            Self::OutOfDomain => (
                Layer::Payload,
                format!(
                    "job {job_id} was stored although insert_job refuses the value asked (23514): \
                     the producer sent another value (clamped, truncated, dropped?); pass the \
                     value as asked and answer the database's refusal"
                ),
            ),
        }
    }

    /// Whether an error of the reference `insert_job` call is this rule's refusal.
    #[must_use]
    pub fn admits_rejection(self, r: &Rejection) -> bool {
        self.admits(Some(&r.sqlstate), r.detail_code.as_deref())
    }

    /// What the refusal must be, for a message.
    #[must_use]
    pub fn wanted(self) -> &'static str {
        match self {
            Self::Duplicate => "SQLSTATE 23505 (duplicate unique key)",
            Self::KeyTooLong => "SQLSTATE ZA003, or a client-side refusal with code key_too_long",
            Self::UniqueStatesNot8Bits => {
                "SQLSTATE 22026, or a client-side refusal with code unique_states_not_8_bits"
            }
            Self::OutOfDomain => "SQLSTATE 23514 (the released validation of the field)",
        }
    }
}

/// The unique index on which a duplicate claim raises 23505, in the reference schema and in
/// released Awa alike.
pub const CLAIM_INDEX: &str = "idx_awa_jobs_unique";

/// The duplicate-claim rule, the one place it is stated: a second job whose unique claim is
/// taken raises 23505 on [`CLAIM_INDEX`]. `what` names the attempt.
///
/// # Errors
/// A mismatch showing what the database raised instead.
pub fn duplicate_claim(what: &str, rej: &Rejection) -> Result<(), CaseFailure> {
    if rej.is_duplicate_claim() {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!("{what}: a duplicate claim must raise 23505 on {CLAIM_INDEX}"),
        json!({"sqlstate": "23505", "constraint": CLAIM_INDEX}),
        json!({"sqlstate": rej.sqlstate, "constraint": rej.constraint, "message": rej.message}),
    ))
}

/// The server error fields a rejection case compares.
#[derive(Debug, Clone)]
pub struct Rejection {
    /// The SQLSTATE.
    pub sqlstate: String,
    /// The primary message.
    pub message: String,
    /// The DETAIL's `code` member, when the DETAIL is JSON.
    pub detail_code: Option<String>,
    /// The whole DETAIL, when it is JSON.
    pub detail: Option<Json>,
    /// The constraint name, for 23505.
    pub constraint: Option<String>,
    /// The HINT.
    pub hint: Option<String>,
}

/// What one DETAIL member of a contract error must be (schema/README.md error table).
#[derive(Debug, Clone)]
pub enum Member {
    /// Exactly this JSON value.
    Eq(Json),
    /// An array holding exactly these strings, in any order.
    Set(&'static [&'static str]),
    /// A non-empty string (free text such as `expected_type`).
    Text,
}

impl Member {
    fn holds(&self, got: Option<&Json>) -> bool {
        match (self, got) {
            (Self::Eq(want), Some(g)) => want == g,
            (Self::Set(want), Some(Json::Array(g))) => {
                let mut got: Vec<&str> = g.iter().filter_map(Json::as_str).collect();
                let mut want = want.to_vec();
                got.sort_unstable();
                want.sort_unstable();
                got.len() == g.len() && got == want
            }
            (Self::Text, Some(Json::String(s))) => !s.trim().is_empty(),
            _ => false,
        }
    }

    fn describe(&self) -> Json {
        match self {
            Self::Eq(v) => v.clone(),
            Self::Set(v) => json!({"any order": v}),
            Self::Text => json!("(a non-empty string)"),
        }
    }
}

/// Turn an insert outcome into the rejection it raised (or a failure saying it succeeded).
pub fn rejection<T: std::fmt::Debug>(
    db: &DbSetup,
    what: &str,
    res: Result<T, tokio_postgres::Error>,
) -> Result<Rejection, CaseFailure> {
    match res {
        Ok(v) => Err(CaseFailure::mismatch(
            format!("{what}: the call succeeded but must be rejected"),
            json!({"outcome": "rejected"}),
            json!({"outcome": "accepted", "result": format!("{v:?}")}),
        )),
        Err(e) => Rejection::of(&e).ok_or_else(|| query_fail(db, what, &e)),
    }
}

impl Rejection {
    /// The refusal a database error carries; `None` for an error that blames the harness
    /// ([`is_harness_error`]: no server error, or a connection or resource SQLSTATE). The one
    /// decoder of a refusal's fields (a DETAIL that is not JSON has no `code`).
    #[must_use]
    pub fn of(e: &tokio_postgres::Error) -> Option<Self> {
        let d = e.as_db_error().filter(|_| !is_harness_error(e))?;
        let detail = d
            .detail()
            .and_then(|t| serde_json::from_str::<Json>(t).ok());
        let detail_code = detail
            .as_ref()
            .and_then(|j| j.get("code").and_then(Json::as_str).map(str::to_owned));
        Some(Self {
            sqlstate: d.code().code().to_owned(),
            message: d.message().to_owned(),
            detail_code,
            detail,
            constraint: d.constraint().map(str::to_owned),
            hint: d.hint().map(str::to_owned),
        })
    }

    /// Whether this is the duplicate-claim refusal ([`duplicate_claim`]).
    #[must_use]
    pub fn is_duplicate_claim(&self) -> bool {
        self.sqlstate == "23505" && self.constraint.as_deref() == Some(CLAIM_INDEX)
    }

    /// The refusal as a report shows it.
    #[must_use]
    pub fn to_json(&self) -> Json {
        json!({"sqlstate": self.sqlstate, "code": self.detail_code, "message": self.message})
    }

    /// Check the DETAIL members besides `code` that the error table lists for this error.
    pub fn expect_detail(
        &self,
        what: &str,
        members: &[(&'static str, Member)],
    ) -> Result<(), CaseFailure> {
        let bad: Vec<&str> = members
            .iter()
            .filter(|(k, m)| !m.holds(self.detail.as_ref().and_then(|d| d.get(*k))))
            .map(|(k, _)| *k)
            .collect();
        if bad.is_empty() {
            return Ok(());
        }
        let want: serde_json::Map<String, Json> = members
            .iter()
            .map(|(k, m)| ((*k).to_owned(), m.describe()))
            .collect();
        Err(CaseFailure::mismatch(
            format!(
                "{what}: DETAIL member(s) {} missing or wrong (the error table lists them)",
                bad.join(", ")
            ),
            Json::Object(want),
            json!({"detail": self.detail, "sqlstate": self.sqlstate}),
        ))
    }

    /// Check SQLSTATE (+ DETAIL `code` for contract errors, + message for released ones).
    pub fn expect(
        &self,
        what: &str,
        sqlstate: &str,
        code: Option<&str>,
        message: Option<&str>,
    ) -> Result<(), CaseFailure> {
        let contract = sqlstate.starts_with("ZA");
        let mut ok = self.sqlstate == sqlstate;
        if let Some(c) = code {
            ok &= self.detail_code.as_deref() == Some(c);
        }
        if let Some(m) = message {
            ok &= self.message == m;
        }
        if contract {
            ok &= self.message.starts_with("awa.insert_job: ");
            ok &= self.hint.as_deref().is_some_and(|h| !h.trim().is_empty());
        }
        if ok {
            return Ok(());
        }
        let mut want = serde_json::Map::new();
        want.insert("sqlstate".to_owned(), json!(sqlstate));
        if let Some(c) = code {
            want.insert("detail.code".to_owned(), json!(c));
        }
        if let Some(m) = message {
            want.insert("message".to_owned(), json!(m));
        }
        if contract {
            want.insert(
                "message".to_owned(),
                json!(message.unwrap_or("awa.insert_job: …")),
            );
            want.insert("hint".to_owned(), json!("(non-empty)"));
        }
        let want = Json::Object(want);
        Err(CaseFailure::mismatch(
            format!("{what}: wrong rejection"),
            want,
            json!({
                "sqlstate": self.sqlstate,
                "detail.code": self.detail_code,
                "message": self.message,
                "hint": self.hint,
                "constraint": self.constraint,
            }),
        ))
    }
}
