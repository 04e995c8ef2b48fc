//! The lanes (ADR 0057): one per request the producer accepts at once, each a connection of
//! the runner's own running one case at a time. This is where a case is scheduled beside
//! others or alone (the gate), where a stray row sends every later case to run alone, where
//! a failure seen beside others is confirmed alone, and where the rows of cases run beside
//! others wait for one batch sweep. The scheduler that hands cases to lanes is the
//! producer module's `Pipeline`; a case's own steps are the engine's (`Session::run_case`).
//!
//! A submodule of the engine so that it shares the session's private state without
//! widening it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Condvar;
use std::sync::Once;

use super::*;
use crate::outcome::RunContext;

/// Cases whose rows are left for the next batch sweep.
#[derive(Default)]
pub(super) struct Unswept {
    /// Their run-scoped queue prefixes.
    pub(super) scopes: Vec<String>,
    /// The job ids the producer answered them (found wherever they landed, ADR 0049).
    pub(super) answered: Vec<i64>,
}

impl Session {
    /// The lanes cases may run on at once: the producer's `max_in_flight` (at most
    /// [`MAX_LANES`]), or fewer after [`Self::limit_lanes`].
    #[must_use]
    pub fn lanes(&self) -> usize {
        self.active
            .load(Ordering::Relaxed)
            .clamp(1, self.lanes.len())
    }

    /// Use at most `n` lanes (`--test-threads 1`: one case at a time, for debugging).
    pub fn limit_lanes(&self, n: usize) {
        self.active
            .store(n.clamp(1, self.lanes.len()), Ordering::Relaxed);
    }

    /// The finding when another request in flight wrote into (or removed from) the rows of
    /// cases that pass alone: no case can be charged with it, so it is the producer's as a
    /// whole (`producer::coverage`, or a run error when that case is not selected).
    #[must_use]
    pub fn unattributed(&self) -> Option<CaseFailure> {
        let touched = lock(&self.unattributed);
        (!touched.is_empty()).then(|| CaseFailure {
            layer: Some(judge::Layer::Payload),
            ..CaseFailure::new(format!(
                "producer {} wrote into (or removed from) the queues of {} case(s) while \
                 serving other requests in flight; each passes alone, so the request at fault \
                 could not be named. The fault shows only with several requests in flight: \
                 reproduce it with the same selection and --test-threads (the requests in \
                 flight beside each case are named below); one at a time hides it (ADR 0057). \
                 {}",
                self.hello().implementation.name,
                touched.len(),
                touched.join("; ")
            ))
        })
    }

    /// [`Self::run`] on lane `lane` (one of [`Self::lanes`]), beside the cases of the other
    /// lanes unless it must run alone: a bulk case (one batch owns the producer), or any case
    /// once a stray row was seen. A case that sees a stray beside others runs again alone.
    ///
    /// # Errors
    /// As [`Self::run`].
    pub fn run_on(&self, lane: usize, case: &Case) -> Result<Verdict, CaseFailure> {
        let Some(slot) = self.lanes.get(lane).or_else(|| self.lanes.first()) else {
            return Err(CaseFailure::harness("the session has no lane"));
        };
        let mut inner = lock(slot);
        let started = Instant::now();
        let beside = self.lanes() > 1
            && !self.serial.load(Ordering::SeqCst)
            && !matches!(case.kind, Kind::Bulk(_));
        let mut outcome = None;
        // The failure beside others that the run alone below confirms, if any.
        let mut doubted = None;
        // The requests in flight beside this case while it ran (at its start and its end).
        let mut beside_it = std::collections::BTreeSet::new();
        if beside {
            let shared = crate::sync::read(&self.gate);
            inner.alone = false;
            inner.strays_seen = false;
            inner.doubt = false;
            {
                let mut in_flight = lock(&self.in_flight);
                beside_it.extend(in_flight.iter().cloned());
                in_flight.insert(case.name.clone());
            }
            let out = self.run_case(&mut inner, case);
            {
                let mut in_flight = lock(&self.in_flight);
                in_flight.remove(&case.name);
                beside_it.extend(in_flight.iter().cloned());
            }
            // Beside the others (a batch holds finished cases only, each in queues of its
            // own), but inside the shared gate: a case alone, which counts every row of the
            // run's login, must not see rows a batch has taken and not yet removed.
            timed(&mut inner, Phase::Sweep, |i| {
                self.sweep_unswept(i, SWEEP_BATCH)
            })?;
            drop(shared);
            if inner.strays_seen {
                // Which case wrote the stray cannot be told while others are in flight
                // (ADR 0057): from here on every case runs alone, this one again.
                self.serial.store(true, Ordering::SeqCst);
            } else if out.is_err() && inner.doubt && !self.stopping() {
                // A failure another case in flight may have caused (a row in this case's
                // queues, its row gone) is confirmed alone, so that it is charged exactly as
                // with one case in flight. A wrong value in the row of an id the producer
                // answered this case is its own; a producer fault fails every request in
                // flight, each naming the fault (ADR 0057).
                self.serial.store(true, Ordering::SeqCst);
                doubted = out.err();
            } else {
                // Any other failure beside others is this case's, and says which requests
                // were in flight with it; once one is seen every later case runs alone, so
                // that no later verdict can depend on what ran beside it (ADR 0057).
                outcome = Some(out.map_err(|mut f| {
                    self.serial.store(true, Ordering::SeqCst);
                    f.message
                        .push_str(&in_flight_context(&beside_it, self.lanes()));
                    f
                }));
            }
        }
        let outcome = match outcome {
            Some(out) => out,
            None => {
                let _alone = crate::sync::write(&self.gate);
                inner.alone = true;
                // Alone, every row of the run's login is the case's: none of another may wait.
                timed(&mut inner, Phase::Sweep, |i| self.sweep_unswept(i, 1))?;
                if inner.strays_seen {
                    // The strays go first: the rerun's count must see only its own rows. No
                    // queue is named `…_p0_…` (cases count from 1): only the login's rows go.
                    inner.strays_seen = false;
                    let none = [format!("{}_p0_", self.db.prefix())];
                    timed(&mut inner, Phase::Sweep, |i| self.cleanup(i, &none, None))?;
                }
                let alone = self.run_case(&mut inner, case);
                if let (Some(beside), Ok(Verdict::Passed)) = (&doubted, &alone) {
                    // Alone it passes: another request in flight wrote into, or removed from,
                    // this case's queues. That writer cannot be named now; the producer as a
                    // whole fails (`producer::coverage`), and every later case runs alone.
                    self.serial.store(true, Ordering::SeqCst);
                    lock(&self.unattributed).push(format!(
                        "{}: beside other requests in flight: {}{}",
                        case.name,
                        beside.message.lines().next().unwrap_or_default(),
                        in_flight_context(&beside_it, self.lanes())
                    ));
                }
                alone
            }
        };
        // Inside a case only the producer's `skipped` makes it unanswered (a case the target
        // or the hello rules out never runs: `not_applicable`).
        {
            let mut tallies = lock(&self.tallies);
            let tally = tallies.entry(case.capability().to_owned()).or_default();
            if matches!(outcome, Ok(Verdict::Skipped(_))) {
                tally.skipped += 1;
            } else {
                tally.answered += 1;
            }
        }
        inner.timings.case(started.elapsed());
        outcome
    }

    /// Remove the rows of the cases waiting for the batch sweep, once there are `at_least`:
    /// their queues and their answered ids (ADR 0049). Beside others, the run login's rows
    /// elsewhere stay (strays, for the count that sends a case to run alone); alone, they go.
    pub(super) fn sweep_unswept(
        &self,
        inner: &mut Inner,
        at_least: usize,
    ) -> Result<(), CaseFailure> {
        let (scopes, answered) = {
            let mut unswept = lock(&self.unswept);
            if unswept.scopes.is_empty() || unswept.scopes.len() < at_least {
                return Ok(());
            }
            (
                std::mem::take(&mut unswept.scopes),
                std::mem::take(&mut unswept.answered),
            )
        };
        let mine = std::mem::replace(&mut inner.answered, answered);
        let swept = self.cleanup(inner, &scopes, None);
        inner.answered = mine;
        swept
    }
}

/// The selected producer cases, run ahead of their trials on the session's lanes (one worker
/// thread per lane, in the trials' order, ADR 0057). Memory stays flat: a verdict is kept
/// only until its trial takes it.
pub struct Pipeline {
    session: Arc<Session>,
    /// The cases queued, by name: any other case is run by its trial itself.
    planned: HashSet<String>,
    queue: Mutex<VecDeque<Case>>,
    results: Mutex<HashMap<String, Result<Verdict, crate::outcome::CaseFailure>>>,
    /// Workers still taking cases (changed under the `results` lock).
    workers: AtomicUsize,
    ready: Condvar,
    started: Once,
    stopped: Stopped,
}

impl Pipeline {
    /// A pipeline of `queued` (the selected cases the session can run), stopped early when
    /// `stopped` says so.
    pub fn new(session: Arc<Session>, queued: VecDeque<Case>, stopped: Stopped) -> Self {
        Self {
            session,
            planned: queued.iter().map(|c| c.name.clone()).collect(),
            queue: Mutex::new(queued),
            results: Mutex::new(HashMap::new()),
            workers: AtomicUsize::new(0),
            ready: Condvar::new(),
            started: Once::new(),
            stopped,
        }
    }

    /// Start the workers (once, when the first producer trial runs).
    fn start(self: &Arc<Self>) {
        self.started.call_once(|| {
            for lane in 0..self.session.lanes() {
                let me = Arc::clone(self);
                self.workers.fetch_add(1, Ordering::SeqCst);
                let spawned = std::thread::Builder::new()
                    .name(format!("awa-lane-{lane}"))
                    .spawn(move || me.work(lane));
                if spawned.is_err() {
                    // Fewer lanes: the others take its cases, or their trials run them.
                    self.workers.fetch_sub(1, Ordering::SeqCst);
                }
            }
        });
    }

    /// A worker: cases from the queue, until it is empty or the run must stop.
    fn work(&self, lane: usize) {
        loop {
            if (self.stopped)() {
                break;
            }
            let Some(case) = lock(&self.queue).pop_front() else {
                break;
            };
            let verdict = self.session.run_on(lane, &case);
            lock(&self.results).insert(case.name.clone(), verdict);
            self.ready.notify_all();
        }
        let _results = lock(&self.results);
        self.workers.fetch_sub(1, Ordering::SeqCst);
        self.ready.notify_all();
    }

    /// The verdict of `case`, once a worker judged it.
    pub fn verdict(self: &Arc<Self>, case: &Case) -> Result<Verdict, crate::outcome::CaseFailure> {
        if !self.planned.contains(&case.name) {
            return self.session.run(case);
        }
        self.start();
        let mut results = lock(&self.results);
        loop {
            if let Some(verdict) = results.remove(&case.name) {
                return verdict;
            }
            if self.workers.load(Ordering::SeqCst) == 0 {
                drop(results);
                // No worker left and no verdict: it was never taken from the queue (the run
                // is stopping, or no worker could start).
                let queued = {
                    let mut queue = lock(&self.queue);
                    let at = queue.iter().position(|c| c.name == case.name);
                    at.and_then(|i| queue.remove(i)).is_some()
                };
                if queued && !(self.stopped)() {
                    return self.session.run(case);
                }
                if queued {
                    return Ok(Verdict::NotApplicable(
                        "not run: the run was asked to stop before this case was sent to the \
                         producer"
                            .to_owned(),
                    ));
                }
                results = lock(&self.results);
                continue;
            }
            results = self
                .ready
                .wait_timeout(results, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// No more lanes than the server's free connection slots allow: each lane is a session of the
/// runner's and about one of the producer's, beside what the rest of the run may still open
/// (its pools, the race suite's sessions, its own). The lanes used are recorded in the
/// provenance (`producer_in_flight`), with the reason when fewer than declared.
pub fn fit_lanes(ctx: &RunContext, session: &Session, db: &DbSetup, test_threads: Option<usize>) {
    let declared = session.hello().in_flight();
    let mut lanes = session.lanes();
    let mut why = String::new();
    if lanes > 1 {
        let threads = crate::contract::environment::test_threads(test_threads);
        let rest = crate::contract::environment::connections_needed(threads, false);
        let free = db
            .pg
            .block_on(crate::contract::environment::free_slots(&db.pg))
            .ok()
            .and_then(Result::ok);
        if let Some(free) = free {
            let rest = i64::try_from(rest).unwrap_or(i64::MAX);
            let fit = usize::try_from((free.saturating_sub(rest)) / 2).unwrap_or(0);
            if fit < lanes {
                lanes = fit.max(1);
                session.limit_lanes(lanes);
                why = format!(
                    " (the server has {free} free connection slots: the rest of the run may \
                     use {rest}, and each request in flight takes 2)"
                );
            }
        }
    }
    ctx.set_provenance(
        "producer_in_flight",
        format!("{lanes} of max_in_flight {declared}{why}"),
    );
}

/// What a failure seen beside other requests says of them: the cases in flight with it and
/// the lanes, so that it can be reproduced with the same concurrency (one at a time hides a
/// fault that needs others in flight), and that every later case ran alone.
fn in_flight_context(beside: &std::collections::BTreeSet<String>, lanes: usize) -> String {
    const NAMED: usize = 8;
    let mut names: Vec<&str> = beside.iter().map(String::as_str).take(NAMED).collect();
    if beside.len() > NAMED {
        names.push("...");
    }
    format!(
        " (seen with {} other request(s) in flight on {lanes} lanes: {}; every later case \
         ran alone; to reproduce, rerun the same selection with the same --test-threads)",
        beside.len(),
        if names.is_empty() {
            "none still in flight when it was judged".to_owned()
        } else {
            names.join(", ")
        }
    )
}
