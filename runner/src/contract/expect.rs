//! The one expectation: the only mapping from a vector (and a width) to the keys a request
//! sends and the queue, route, digests, keys and states the stored job must have.
//!
//! * [`routes`]: the route a routing vector expects at each width it is checked at
//!   (routing_precedence at its own width; ordering_shard, concurrency_shard and
//!   concurrency_digest at each width asked), the ordering-key fallback digest included
//!   ([`fallback_digest`], ADR 0001 D3);
//! * [`claims`]: the duplicate rule of `unique_states` (a second job with the same key is
//!   refused exactly when the first job's initial state is in the mask);
//! * [`Expectation`]: what one stored job must be, with [`Expectation::opts`], the `opts` that
//!   state every expectation to the database.

use awa_conformance_core::{self as core, Route, RouteSource, Width, DIGEST_LEN};
use awa_conformance_vectors::Case as VCase;
use serde_json::{json, Value as Json};

use super::call::h;

/// The digest a job with an ordering key (and no concurrency key) stores: the §6 digest of
/// the ordering key (ADR 0001 D3). The one place it is derived.
#[must_use]
pub fn fallback_digest(ordering_key: &[u8]) -> [u8; DIGEST_LEN] {
    core::concurrency_digest(ordering_key)
}

/// The keys a routing vector sends and the route it expects at one width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteAt {
    /// The queue's width.
    pub width: u8,
    /// The ordering key sent.
    pub ordering_key: Option<Vec<u8>>,
    /// The concurrency key sent.
    pub concurrency_key: Option<Vec<u8>>,
    /// The route the stored job must have.
    pub route: Route,
}

/// The routes `case` expects: a routing_precedence vector at its own width (whatever `widths`
/// says), an ordering_shard, concurrency_shard or concurrency_digest vector at each of
/// `widths` (1..=64; a width outside the vector's shards is left out). `None` for any other
/// family, and for a rejected vector.
#[must_use]
pub fn routes(case: &VCase, widths: &[u8]) -> Option<Vec<RouteAt>> {
    let at = |shards: &dyn Fn(u8) -> Option<u8>,
              ordering: Option<&[u8]>,
              concurrency: Option<&[u8]>,
              source: RouteSource,
              digest: [u8; DIGEST_LEN]| {
        widths
            .iter()
            .filter_map(|w| {
                Some(RouteAt {
                    width: *w,
                    ordering_key: ordering.map(<[u8]>::to_vec),
                    concurrency_key: concurrency.map(<[u8]>::to_vec),
                    route: Route {
                        source,
                        enqueue_shard: Some(shards(*w)?),
                        concurrency_digest: Some(digest),
                    },
                })
            })
            .collect::<Vec<_>>()
    };
    let nth = |shards: &[u8], w: u8| shards.get(usize::from(w).checked_sub(1)?).copied();
    Some(match case {
        VCase::RoutingPrecedence(c) => vec![RouteAt {
            width: c.width,
            ordering_key: c.ordering_key.clone(),
            concurrency_key: c.concurrency_key.clone(),
            route: Route {
                source: c.route_source,
                enqueue_shard: c.enqueue_shard,
                concurrency_digest: c.concurrency_digest,
            },
        }],
        // The vector pins only the digest; the shard at each width is the core's (D2).
        VCase::ConcurrencyDigest(c) => at(
            &|w| {
                Width::new(i64::from(w))
                    .ok()
                    .map(|w| core::concurrency_shard(&c.digest, w))
            },
            None,
            Some(&c.key),
            RouteSource::ConcurrencyKey,
            c.digest,
        ),
        VCase::ConcurrencyShard(c) => at(
            &|w| nth(&c.shards, w),
            None,
            Some(&c.key),
            RouteSource::ConcurrencyKey,
            c.digest,
        ),
        VCase::OrderingShard(c) => at(
            &|w| nth(&c.shards, w),
            Some(&c.key),
            None,
            RouteSource::OrderingKey,
            fallback_digest(&c.key),
        ),
        _ => return None,
    })
}

/// Every width 1..=64.
#[must_use]
pub fn every_width() -> Vec<u8> {
    (1..=core::MAX_WIDTH).collect()
}

/// The duplicate rule of `unique_states`: a first job in `state` takes the unique claim (so a
/// second job with the same key is refused with 23505) exactly when `mask` has the bit of
/// that state ([`core::JOB_STATES`]: bit `i` is `JOB_STATES[i]`).
#[must_use]
pub fn claims(mask: u8, state: &str) -> bool {
    core::JOB_STATES
        .iter()
        .position(|s| *s == state)
        .is_some_and(|i| mask & (1 << i) != 0)
}

/// What a request must end in when it is stored: the one expectation every engine judges
/// against (the SQL suites, the producer engine, compat, fuzz).
#[derive(Debug, Clone)]
pub struct Expectation {
    /// The (physical) queue.
    pub queue: String,
    /// The queue's width.
    pub width: Width,
    /// `scheduled` or `available`.
    pub state: &'static str,
    /// The priority.
    pub priority: i16,
    /// The routing.
    pub route: Route,
    /// The digest of the ordering key sent (`None`: none sent).
    pub ordering_key_digest: Option<[u8; 32]>,
    /// The unique key (`None`: none).
    pub unique_key: Option<Vec<u8>>,
    /// The unique states as sent (`None`: none).
    pub unique_states: Option<String>,
    /// The expected canonical args and pre-image (unique cases), for the layer and report.
    pub unique_intermediates: Option<(Option<Vec<u8>>, Vec<u8>)>,
    /// Keys computed from near-miss inputs (e.g. without the period bucket), each with what
    /// it means: a stored key equal to one of them names the mistake.
    pub unique_near_misses: Vec<(String, Vec<u8>)>,
}

impl Expectation {
    /// The JSON shown in reports.
    #[must_use]
    pub fn to_json(&self) -> Json {
        let w = self.width.get();
        let (canonical, preimage) = match &self.unique_intermediates {
            Some((c, p)) => (
                c.as_ref().map_or(Json::Null, |c| {
                    Json::String(String::from_utf8_lossy(c).into_owned())
                }),
                h(Some(p)),
            ),
            None => (Json::Null, Json::Null),
        };
        json!({
            "queue": self.queue,
            "width": w,
            "state": self.state,
            "priority": self.priority,
            "enqueue_shard": self.route.enqueue_shard.map_or_else(
                || Json::String(format!("any in [0, {w})")), |s| json!(s)),
            "route_source": self.route.source.as_str(),
            "concurrency_digest_hex": h(self.route.concurrency_digest.as_ref().map(|d| &d[..])),
            "ordering_key_digest_hex": h(self.ordering_key_digest.as_ref().map(|d| &d[..])),
            "unique_key_hex": h(self.unique_key.as_deref()),
            "unique_states": self.unique_states,
            "canonical_args": canonical,
            "unique_preimage_hex": preimage,
        })
    }
}

impl Expectation {
    /// A job on `queue` of width `width` routed as `route`, with the contract defaults
    /// (priority 2, `available`), the ordering key's digest when one is sent, no unique key.
    #[must_use]
    pub fn routed(queue: &str, width: Width, route: Route, ordering_key: Option<&[u8]>) -> Self {
        Self {
            queue: queue.to_owned(),
            width,
            state: "available",
            priority: 2,
            route,
            ordering_key_digest: ordering_key.map(fallback_digest),
            unique_key: None,
            unique_states: None,
            unique_intermediates: None,
            unique_near_misses: Vec::new(),
        }
    }

    /// The routing part, as a report shows it.
    #[must_use]
    pub fn routing_json(&self) -> Json {
        route_json(self.width, &self.route)
    }

    /// The `opts` that state every routing expectation ([`route_opts`]).
    #[must_use]
    pub fn opts(&self) -> Json {
        route_opts(&self.route)
    }
}

/// A route at a width, as a report shows it (a rotor: any shard in `[0, width)`).
#[must_use]
pub fn route_json(width: Width, route: &Route) -> Json {
    let w = width.get();
    json!({
        "width": w,
        "route_source": route.source.as_str(),
        "enqueue_shard": route.enqueue_shard.map_or_else(
            || Json::String(format!("any in [0, {w})")), |s| json!(s)),
        "concurrency_digest_hex": h(route.concurrency_digest.as_ref().map(|d| &d[..])),
    })
}

/// The `opts` that state every expectation of `route` to the database (docs/contract.md opts
/// keys): a rotor states no shard.
#[must_use]
pub fn route_opts(route: &Route) -> Json {
    let mut o = serde_json::Map::new();
    o.insert(
        "expected_concurrency_digest".to_owned(),
        h(route.concurrency_digest.as_ref().map(|d| &d[..])),
    );
    if let Some(s) = route.enqueue_shard {
        o.insert("expected_enqueue_shard".to_owned(), json!(s));
    }
    o.insert(
        "expected_route_source".to_owned(),
        json!(route.source.as_str()),
    );
    Json::Object(o)
}

/// What one payload field of a stored job must be: exactly a value, or, for a request without
/// `run_at`, an instant inside the enqueue's window (between a clock reading before the call
/// and one after the answer). Times are UTC text to the microsecond
/// (`YYYY-MM-DDTHH:MI:SS.ffffffZ`), which order as text as they do in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// Exactly this value.
    Is(Json),
    /// A time no earlier than the first, no later than the second.
    Between(String, String),
}

impl Want {
    /// Whether `stored` (the field as read back; null when the column is NULL) satisfies this.
    #[must_use]
    pub fn admits(&self, stored: &Json) -> bool {
        match self {
            Self::Is(v) => v == stored,
            Self::Between(from, to) => stored
                .as_str()
                .is_some_and(|t| from.as_str() <= t && t <= to.as_str()),
        }
    }

    /// The expectation as a report shows it.
    #[must_use]
    pub fn to_json(&self) -> Json {
        match self {
            Self::Is(v) => v.clone(),
            Self::Between(from, to) => json!({"between": [from, to]}),
        }
    }
}

/// The payload both engines send to exercise a store (`sql::payload::*` and
/// `producer::payload::*`): values a careless store, or a careless producer, changes.
pub mod exercise {
    /// A kind only a byte-exact store keeps: mixed case, punctuation and non-ASCII.
    pub const KIND: &str = "Awa.Conformance/Payload·Ünï";
    /// Tags out of sorted order, one non-ASCII and one outside the BMP.
    pub const TAGS: [&str; 3] = ["zeta", "Alpha", "ünïcödé 🙂"];
    /// A run_at with a UTC offset and microseconds.
    pub const RUN_AT: &str = "2031-07-04T12:34:56.123456+05:30";
    /// The same instant in UTC, as producer protocol 2 writes run_at.
    pub const RUN_AT_UTC: &str = "2031-07-04T07:04:56.123456Z";
    /// The priority they ask for (not the default).
    pub const PRIORITY: i16 = 3;
    /// The attempts they ask for (not the default).
    pub const MAX_ATTEMPTS: i16 = 7;
    /// Metadata a careless store changes: a null member, an integer beyond 2^64, a decimal
    /// whose trailing zero jsonb keeps, and non-ASCII text (the SQL engines' metadata).
    pub const METADATA: &str = r#"{"source": "awa-conformance", "nothing": null, "big": 123456789012345678901234567890, "ratio": 1.50, "note": "ünï \u2028"}"#;
}

/// What a stored job must hold besides its routing: the payload a worker receives (contract
/// revision 1.2, ADR 0052; docs/contract.md §15 says what "stored as asked" means per field),
/// field by field in the call layer's one order ([`super::call::PAYLOAD_FIELDS`]). `args`
/// and `metadata` are jsonb's text of what was asked, as PostgreSQL itself makes it
/// (`payload_asked.sql`), or the reference row's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    /// Each field and what it must be.
    pub fields: Vec<(&'static str, Want)>,
}

impl Payload {
    /// The payload `request` asks for, given what the server made of its args, metadata and
    /// run_at (`asked`: jsonb texts and the UTC text of `run_at`, if any) and the clock
    /// readings around its call (for a defaulted `run_at`): the call layer's
    /// [`super::call::InsertJob::asks`].
    #[must_use]
    pub fn asked(
        request: &super::call::InsertJob,
        asked: super::call::Asked,
        clock: (&str, &str),
    ) -> Self {
        Self {
            fields: request.asks(asked, clock),
        }
    }

    /// The JSON shown in reports.
    #[must_use]
    pub fn to_json(&self) -> Json {
        Json::Object(
            self.fields
                .iter()
                .map(|(name, want)| ((*name).to_owned(), want.to_json()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_duplicate_rule_reads_the_mask_by_state() {
        // '10000000' is scheduled only; the released default '11111000' both initial states.
        assert!(claims(1, "scheduled") && !claims(1, "available"));
        assert!(claims(2, "available") && !claims(2, "scheduled"));
        assert!(claims(core::DEFAULT_UNIQUE_STATES, "available"));
        assert!(!claims(0xff, "no such state"));
    }

    #[test]
    fn routes_cover_each_width_asked_and_the_fallback_digest() {
        let set = awa_conformance_vectors::embedded().unwrap_or_else(|e| panic!("{e}"));
        let (_, os) = set
            .iter()
            .find(|(_, v)| matches!(v.case, VCase::OrderingShard(_)))
            .unwrap_or_else(|| panic!("no ordering_shard vector"));
        let VCase::OrderingShard(c) = &os.case else {
            unreachable!()
        };
        let got = routes(&os.case, &[1, 8, 64]).unwrap_or_default();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].route.enqueue_shard, c.shards.get(7).copied());
        assert_eq!(
            got[1].route.concurrency_digest,
            Some(fallback_digest(&c.key))
        );
        // A width outside 1..=64 is left out, never guessed.
        assert!(routes(&os.case, &[0, 65]).unwrap_or_default().is_empty());
    }
}

/// What one request of a check must end in: a job stored as expected, or a refusal by the
/// rule of the contract. The answer judge ([`super::judge::answer`]) takes it, so what a step
/// must end in is the contract's, not any engine's.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// Stored as expected.
    Stored(Box<Expectation>),
    /// Refused by this rule.
    Refused(super::judge::Refusal),
}
