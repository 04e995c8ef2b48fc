//! The producer target of `fuzz`: random vectors turned into enqueue cases by the producer
//! engine ([`crate::producer`]) and judged exactly as `--producer` judges the frozen ones.
//!
//! Each batch becomes a vector set of its own; [`crate::producer::cases::cases`] builds the
//! engine's cases from it (routing at the vector's width, keys at widths 1, 2, 7, 8 and 64,
//! unique keys computed by the producer, partitions, refusals of over-long keys), and the
//! engine's session runs each one: run-scoped queues, the producer's enqueue, the stored job
//! read back, the three-answer judge, and every row removed afterwards. The engine's fixed
//! cases (duplicates, unique_states masks) are not tied to a generated vector and are left to
//! `--producer`. A payload case (a generated canonical_json value as args) also carries one
//! stored input class of another member (docs/contract.md §16, [`space::stored_class`]), as the
//! database fuzzer's do, when the producer's protocol can say it.

use std::collections::BTreeMap;
use std::sync::Arc;

use awa_conformance_vectors::{Family, Manifest};

use super::gen::Generated;
use super::{Checked, Finding, Stop};
use crate::contract::space;
use crate::contract::target::DbSetup;
use crate::error::Error;
use crate::expected::ExpectedFailures;
use crate::outcome::{FailureKind, RunContext, Verdict};
use crate::pg::{Dsn, Pg};
use crate::producer::case_loop::CaseLoop;
use crate::producer::{cases, engine};

/// A producer under fuzz, with the checked database its engine works on.
pub struct ProducerTarget {
    db: Arc<DbSetup>,
    /// The session's one loop ([`CaseLoop`]), as `--producer` and the library run it.
    run: CaseLoop,
    manifest: Manifest,
    cmd: String,
    /// What the producer's sessions were set to (the provenance's `producer_session`).
    sessions: String,
}

impl std::fmt::Debug for ProducerTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerTarget")
            .field("cmd", &self.cmd)
            .finish_non_exhaustive()
    }
}

impl ProducerTarget {
    /// Check the database as a run does (exit 4/5 on trouble), then start the producer `cmd`
    /// as a run starts it ([`crate::producer::subprocess`]): `AWA_CONFORMANCE_DSN` logs in as
    /// the run's temporary login, whose sessions start with the callers' settings unless
    /// `plain` (else `written_dsn`, the run's `--dsn` as written, else the door's connection
    /// string), and `AWA_CONFORMANCE_SCHEMA`.
    ///
    /// # Errors
    /// Database, schema and harness errors (the producer cannot start or says no valid hello).
    pub fn open(
        cmd: &str,
        dsn: Dsn,
        written_dsn: Option<String>,
        args: &super::FuzzOptions,
        stop: &Stop,
    ) -> Result<Self, Error> {
        let (schema, producer_role, timeout) = (
            &args.schema,
            args.producer_role.as_str(),
            args.adapter_timeout,
        );
        let pg = Pg::new(dsn)?;
        let ctx = RunContext::new(ExpectedFailures::default());
        let db = crate::contract::open::preflight(
            &ctx,
            pg,
            schema,
            producer_role,
            None,
            true,
            crate::contract::server::untested_server_allowed_by_env(),
        )?;
        let manifest = awa_conformance_vectors::embedded()
            .map_err(|e| Error::VectorsInvalid {
                detail: e.to_string(),
            })?
            .manifest;
        let stopped: engine::Stopped = {
            let stop = Arc::clone(stop);
            Arc::new(move || stop.get().is_some())
        };
        db.plain_sessions
            .store(args.plain_sessions, std::sync::atomic::Ordering::SeqCst);
        let launch = crate::producer::Launch {
            cmd: cmd.to_owned(),
            producer_dsn: None,
            run_dsn: written_dsn,
            timeout,
            max_consecutive_timeouts: crate::producer::DEFAULT_MAX_CONSECUTIVE_TIMEOUTS,
            validate: false,
        };
        let (producer, login, sessions) =
            crate::producer::subprocess(&launch, &db, Arc::clone(&stopped));
        let session =
            engine::Session::start_as(Box::new(producer), Arc::clone(&db), timeout, login)?;
        // Fuzz cases are sent one after the other, each judged before the next is made.
        session.limit_lanes(1);
        let run = CaseLoop::new(session, &[], &|_| true, stopped);
        Ok(Self {
            db,
            run,
            manifest,
            cmd: cmd.to_owned(),
            sessions,
        })
    }

    /// A one-line description for the run's header and findings.
    #[must_use]
    pub fn describe(&self) -> String {
        let hello = self.run.session().hello();
        format!(
            "producer {} {} (`{}`) on {} schema {}, its sessions: {}",
            hello.implementation.name,
            hello.implementation.version,
            self.cmd,
            self.db.pg.dsn().redacted(),
            self.db.schema.quoted(),
            self.sessions
        )
    }

    /// The families the engine builds enqueue cases from: canonical_json values become the
    /// args of payload cases (with and without a unique key), so generated payloads reach
    /// what the producer stores and the keys it computes.
    #[must_use]
    pub fn families(&self) -> Vec<Family> {
        vec![
            Family::CanonicalJson,
            Family::RoutingPrecedence,
            Family::ConcurrencyDigest,
            Family::ConcurrencyShard,
            Family::OrderingShard,
            Family::UniqueKey,
            Family::Partition,
        ]
    }

    /// Run the engine's cases of `batch` through the session's one loop. `_stop` is the run's
    /// stop flag, which the loop watches already (it was given to [`ProducerTarget::open`]).
    ///
    /// # Errors
    /// Never for a single case (a producer fault is a problem of the run, exit 6).
    pub fn check(&mut self, batch: &[Generated], _stop: &Stop) -> Result<Checked, Error> {
        let mut by_id: BTreeMap<&str, &Generated> = BTreeMap::new();
        for g in batch {
            by_id.entry(g.vector.id.as_str()).or_insert(g);
        }
        let unique: Vec<&Generated> = by_id.values().copied().collect();
        let set = super::vector_set(&unique, &self.manifest);
        let mut out = Checked::default();
        let hello = self.run.session().hello();
        // Each case with its generated value and the input class put on it.
        let mut sent = BTreeMap::new();
        let mut chosen = Vec::new();
        for mut case in cases::cases(&set) {
            // The engine's fixed cases carry no generated vector.
            let Some(g) = by_id.get(case.id.as_str()).copied() else {
                continue;
            };
            // PostgreSQL text and jsonb cannot hold U+0000, so a kind, queue or args holding
            // it cannot be enqueued at all (docs/contract.md §10): not a producer's fault.
            if holds_nul(&g.vector.case.input_json().to_serde()) {
                out.not_sent += 1;
                continue;
            }
            let class = with_class(&mut case, g.case, &hello);
            sent.insert(case.name.clone(), (g, class));
            chosen.push(case);
        }
        let unresponsive = self.run.each(chosen, |case, outcome| {
            let Some(&(g, class)) = sent.get(&case.name) else {
                return;
            };
            match outcome.verdict {
                Ok(Verdict::Passed) => out.hit(g.family),
                // Never sent: the producer cannot answer it (its capabilities or protocol).
                Ok(Verdict::NotApplicable(_)) => out.not_sent += 1,
                Ok(Verdict::Skipped(_)) => out.skipped += 1,
                Err(f) if f.kind == FailureKind::Harness => {
                    out.problems.push(format!("{}: {}", case.name, f.text()));
                }
                Err(f) => {
                    out.hit(g.family);
                    let with = class.map_or_else(String::new, |c| format!(" with input class {c}"));
                    out.findings.push(Finding::new(
                        g,
                        format!("{}{with}: {}", case.name, f.text()),
                        f.expected
                            .unwrap_or_else(|| g.vector.case.expected_json().to_serde()),
                        f.actual.unwrap_or(serde_json::Value::Null),
                    ));
                }
            }
        });
        if let Some(message) = unresponsive {
            out.problems.push(format!("producer: {message}"));
        }
        Ok(out)
    }

    /// Stop the producer and remove whatever the run left (each case already cleans up).
    pub fn close(&self) -> Vec<String> {
        let concluded = self.run.conclude(false);
        let mut problems: Vec<String> = concluded
            .unattributed
            .into_iter()
            .chain(concluded.stop_problem)
            .collect();
        if let Err(e) = self.db.cleanup() {
            problems.push(format!("cleanup: {e}"));
        }
        problems
    }
}

/// Put the stored input class of the `n`th generated value on `case` when it is a payload case
/// and the producer's protocol can say that class (a protocol 2 producer has no metadata or
/// max_attempts); returns the class's ID when one was put.
fn with_class(
    case: &mut cases::Case,
    n: u64,
    hello: &crate::protocol::Hello,
) -> Option<&'static str> {
    let class = space::stored_class(n)?;
    let cases::Kind::Payload(p) = &mut case.kind else {
        return None;
    };
    p.class = Some(Box::new(class.clone()));
    if case.not_expressible(hello).is_some() {
        if let cases::Kind::Payload(p) = &mut case.kind {
            p.class = None;
        }
        return None;
    }
    Some(class.id)
}

/// Whether any string (or member name) of `j` contains U+0000.
fn holds_nul(j: &serde_json::Value) -> bool {
    match j {
        serde_json::Value::String(s) => s.contains('\0'),
        serde_json::Value::Array(a) => a.iter().any(holds_nul),
        serde_json::Value::Object(o) => o.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}
