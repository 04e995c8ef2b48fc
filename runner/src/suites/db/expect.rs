//! How the DB cases judge what came back: the stored request, the routing a vector expects
//! at one width, and the fields of a rejection (SQLSTATE, DETAIL members).

use serde_json::{json, Value as Json};

use super::case::{is_harness_error, query_fail};
use super::request::{opt_hex, Inserted, Req, Stored};
use super::DbSetup;
use crate::outcome::CaseFailure;
use awa_conformance_vectors::to_hex as hex;

/// The job's queue, priority, initial state and ordering key (as its digest, contract v1.1)
/// come back exactly as requested, both in the result of `insert_job` and as stored (read back
/// through `job_routing`).
pub(super) fn check_stored_request(r: &Req, i: &Inserted, s: &Stored) -> Result<(), CaseFailure> {
    let requested_digest = r
        .ordering_key
        .as_deref()
        .map(|k| hex(&awa_conformance_core::concurrency_digest(k)));
    let want = json!({
        "queue": r.queue,
        "priority": r.priority,
        "state": r.expected_state(),
        "ordering_key_digest_hex": requested_digest,
    });
    let returned = json!({
        "queue": i.queue,
        "priority": i.priority,
        "state": i.state,
        "ordering_key_digest_hex": requested_digest,
    });
    let stored = json!({
        "queue": s.queue,
        "priority": s.priority,
        "state": s.state,
        "ordering_key_digest_hex": opt_hex(s.ordering_key_digest.as_deref()),
    });
    if returned == want && stored == want {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!(
            "job {}: queue, priority, state or ordering key not kept as requested",
            i.job_id
        ),
        want,
        json!({"returned": returned, "stored": stored}),
    ))
}

/// The routing a case expects at one width.
#[derive(Debug, Clone)]
pub(super) struct Expect {
    pub(super) width: u8,
    pub(super) route_source: &'static str,
    /// `None`: rotor, any shard in `[0, width)`.
    pub(super) enqueue_shard: Option<u8>,
    pub(super) concurrency_digest: Option<[u8; 32]>,
}

impl Expect {
    fn to_json(&self) -> Json {
        json!({
            "width": self.width,
            "route_source": self.route_source,
            "enqueue_shard": self.enqueue_shard.map_or_else(
                || Json::String(format!("any in [0, {})", self.width)),
                |s| json!(s)),
            "concurrency_digest_hex": opt_hex(self.concurrency_digest.as_ref().map(|d| &d[..])),
        })
    }

    /// The `opts` that states every expectation of this width.
    pub(super) fn opts(&self) -> Json {
        let mut o = serde_json::Map::new();
        o.insert(
            "expected_concurrency_digest".to_owned(),
            opt_hex(self.concurrency_digest.as_ref().map(|d| &d[..])),
        );
        if let Some(s) = self.enqueue_shard {
            o.insert("expected_enqueue_shard".to_owned(), json!(s));
        }
        o.insert("expected_route_source".to_owned(), json!(self.route_source));
        Json::Object(o)
    }

    fn shard_ok(&self, got: Option<i16>) -> bool {
        // The rule lives in the core (Route::admits); a width outside 1..=64 admits nothing.
        awa_conformance_core::Width::new(i64::from(self.width)).is_ok_and(|w| {
            got.is_some_and(|g| {
                awa_conformance_core::shard_admitted(self.enqueue_shard, i64::from(g), w)
            })
        })
    }

    /// Compare one returned + stored routing with this expectation.
    pub(super) fn check(
        &self,
        label: &str,
        ins: &Inserted,
        st: &Stored,
    ) -> Result<(), CaseFailure> {
        let want_digest = self.concurrency_digest.map(|d| d.to_vec());
        let returned_ok = ins.route_source.as_deref() == Some(self.route_source)
            && self.shard_ok(ins.enqueue_shard)
            && ins.concurrency_digest == want_digest;
        let stored_ok = st.job_id == Some(ins.job_id)
            && st.route_source.as_deref() == Some(self.route_source)
            && self.shard_ok(st.enqueue_shard)
            && st.enqueue_shard == ins.enqueue_shard
            && st.concurrency_digest == want_digest;
        if returned_ok && stored_ok {
            return Ok(());
        }
        let which = match (returned_ok, stored_ok) {
            (false, false) => "returned and stored routing",
            (false, true) => "returned routing",
            _ => "stored routing (job_routing)",
        };
        Err(CaseFailure::mismatch(
            format!(
                "{label}: {which} differs from the vector at width {}",
                self.width
            ),
            self.to_json(),
            json!({
                "returned": {
                    "route_source": ins.route_source,
                    "enqueue_shard": ins.enqueue_shard,
                    "concurrency_digest_hex": opt_hex(ins.concurrency_digest.as_deref()),
                },
                "stored": {
                    "job_id": st.job_id,
                    "route_source": st.route_source,
                    "enqueue_shard": st.enqueue_shard,
                    "concurrency_digest_hex": opt_hex(st.concurrency_digest.as_deref()),
                },
            }),
        ))
    }
}

/// The server error fields a rejection case compares.
#[derive(Debug, Clone)]
pub(super) struct Rejection {
    pub(super) sqlstate: String,
    pub(super) message: String,
    pub(super) detail_code: Option<String>,
    /// The whole DETAIL, when it is JSON.
    pub(super) detail: Option<Json>,
    pub(super) constraint: Option<String>,
    pub(super) hint: Option<String>,
}

/// What one DETAIL member of a contract error must be (schema/README.md error table).
#[derive(Debug, Clone)]
pub(super) enum Member {
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
pub(super) fn rejection<T: std::fmt::Debug>(
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
        Err(e) => match e.as_db_error() {
            Some(d) if !is_harness_error(&e) => {
                let detail = d
                    .detail()
                    .and_then(|t| serde_json::from_str::<Json>(t).ok());
                let detail_code = detail
                    .as_ref()
                    .and_then(|j| j.get("code").and_then(Json::as_str).map(str::to_owned));
                Ok(Rejection {
                    sqlstate: d.code().code().to_owned(),
                    message: d.message().to_owned(),
                    detail_code,
                    detail,
                    constraint: d.constraint().map(str::to_owned),
                    hint: d.hint().map(str::to_owned),
                })
            }
            _ => Err(query_fail(db, what, &e)),
        },
    }
}

impl Rejection {
    /// Check the DETAIL members besides `code` that the error table lists for this error.
    pub(super) fn expect_detail(
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
    pub(super) fn expect(
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
