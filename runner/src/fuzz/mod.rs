//! `awa-conformance fuzz`: random vectors beyond the frozen ones, judged like the frozen ones.
//!
//! A seeded generator ([`gen`], frozen: the same seed gives the same cases in every version)
//! makes vectors with the vectors crate's constructors, so every expected value comes from the
//! core, the one judge. A target answers them: a database's contract functions ([`db`]:
//! `insert_job` and `job_routing` in rolled-back transactions, and the optional routing
//! helpers), a producer's pure functions through the adapter protocol ([`adapter`]), or a
//! producer's enqueue path through the producer engine ([`producer`]). Each answer is
//! compared with the vector by the runner's one comparison of an answer with a vector
//! ([`crate::contract::judge::answer`]), or, for producers, by the engine's judge. A disagreement is printed on stdout as a finding: the
//! seed and case, what differed, and the ready-to-add vector in its family's file shape
//! (description "found by fuzz seed N case K"). `--replay FILE` runs printed findings again.
//!
//! Exit codes ([`crate::exit`]): 0 no disagreement, 1 a disagreement, 3 usage or nothing
//! checked, 4 no database, 5 schema missing, 6 harness error (adapter crashed or hung,
//! connection lost), 130/141/143 stopped (nothing was committed, the adapter's process
//! group is killed). Docs: docs/fuzz.md.

pub mod adapter;
pub mod db;
pub mod gen;
pub mod producer;
pub mod rng;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use awa_conformance_vectors::{
    check_vector, content_id, render, Family, Json, Manifest, VectorFile, VectorSet,
};
use serde_json::Value as JsonValue;

use crate::error::Error;
use crate::exit;
use crate::interrupt::StopReason;
use crate::pg::{Dsn, SchemaName};
use gen::Generated;

/// Set once when the run must stop (signal, closed stdout).
pub type Stop = Arc<OnceLock<StopReason>>;

/// How often a long run prints a progress line on stderr.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// The first batch's size in cases; it doubles while a batch takes under a second.
const FIRST_BATCH: u64 = 16;
/// The largest batch, in cases.
const MAX_BATCH: u64 = 1024;

/// What `fuzz` checks and how long: the command line's `fuzz` options, typed
/// (the front hall's `FuzzArgs` converts them).
#[derive(Debug, Clone)]
pub struct FuzzOptions {
    /// The database (`--dsn`); `None`: `DATABASE_URL`, then the PG* environment.
    pub dsn: Option<String>,
    /// The contract schema.
    pub schema: SchemaName,
    /// The contract's producer role.
    pub producer_role: String,
    /// Fuzz this adapter command's pure functions instead of the database.
    pub adapter: Option<String>,
    /// Fuzz this producer command's enqueue path instead of the database.
    pub producer: Option<String>,
    /// The seed (`None` only with `replay`).
    pub seed: Option<u64>,
    /// Check this many cases.
    pub cases: Option<u64>,
    /// Check cases for this long.
    pub seconds: Option<u64>,
    /// The first case number.
    pub start: u64,
    /// Run the findings of this file (`-`: stdin) instead of generating cases.
    pub replay: Option<PathBuf>,
    /// Stop after this many disagreements.
    pub max_findings: u64,
    /// Bound on each wait for the adapter or producer.
    pub adapter_timeout: Duration,
    /// The database's calls and the producer's sessions keep the server's defaults instead
    /// of the callers' settings (`--plain-sessions`).
    pub plain_sessions: bool,
}

/// One disagreement (or, with `harness`, an input the adapter crashed or hung on).
#[derive(Debug, Clone)]
pub struct Finding {
    /// The generated vector.
    pub generated: Generated,
    /// What differed.
    pub message: String,
    /// What the vector expects.
    pub expected: JsonValue,
    /// What the target answered.
    pub actual: JsonValue,
    /// A harness failure (exit 6), not a disagreement (exit 1).
    pub harness: bool,
}

impl Finding {
    /// A disagreement about `g`.
    #[must_use]
    pub fn new(g: &Generated, message: String, expected: JsonValue, actual: JsonValue) -> Self {
        Self {
            generated: g.clone(),
            message,
            expected,
            actual,
            harness: false,
        }
    }
}

/// What a target made of one batch.
#[derive(Debug, Default)]
pub struct Checked {
    /// Vectors answered and judged, per family.
    pub checked: BTreeMap<&'static str, usize>,
    /// Vectors the target skipped (adapter `skipped` answers).
    pub skipped: usize,
    /// Vectors not sent (a family or an error form the target does not check).
    pub not_sent: usize,
    /// Disagreements.
    pub findings: Vec<Finding>,
    /// Harness problems (exit 6).
    pub problems: Vec<String>,
}

impl Checked {
    /// Count one judged vector of `family`.
    pub fn hit(&mut self, family: Family) {
        *self.checked.entry(family.as_str()).or_default() += 1;
    }
}

/// A vector set holding `batch` (one file per family, in [`Family::ALL`] order), as the
/// adapter exchange and the producer engine read the frozen ones.
#[must_use]
pub fn vector_set(batch: &[&Generated], manifest: &Manifest) -> VectorSet {
    let mut files = Vec::new();
    for family in Family::ALL {
        let vectors: Vec<_> = batch
            .iter()
            .filter(|g| g.family == family)
            .map(|g| g.vector.clone())
            .collect();
        if vectors.is_empty() {
            continue;
        }
        let raw: Vec<JsonValue> = vectors.iter().map(|v| v.to_json().to_serde()).collect();
        files.push(VectorFile {
            family,
            release: "fuzz".to_owned(),
            path: "fuzz".to_owned(),
            text: String::new(),
            json: serde_json::json!({ "vectors": raw }),
            description: String::new(),
            contract_version: awa_conformance_core::CONTRACT_VERSION,
            retired: Vec::new(),
            vectors,
        });
    }
    VectorSet {
        files,
        manifest: manifest.clone(),
        bases: Vec::new(),
        errata: Vec::new(),
    }
}

/// What is fuzzed.
enum Target {
    Db(db::DbTarget),
    Adapter(Box<adapter::AdapterTarget>),
    Producer(Box<producer::ProducerTarget>),
}

impl Target {
    fn describe(&self) -> String {
        match self {
            Self::Db(t) => t.describe(),
            Self::Adapter(t) => t.describe(),
            Self::Producer(t) => t.describe(),
        }
    }

    fn families(&self) -> Vec<Family> {
        match self {
            Self::Db(t) => t.families(),
            Self::Adapter(t) => t.families(),
            Self::Producer(t) => t.families(),
        }
    }

    fn check(&mut self, batch: &[Generated], stop: &Stop) -> Result<Checked, Error> {
        match self {
            Self::Db(t) => t.check(batch, stop),
            Self::Adapter(t) => t.check(batch, stop),
            Self::Producer(t) => t.check(batch, stop),
        }
    }

    /// End what the target started; problems to report (exit 6).
    fn close(&self) -> Vec<String> {
        match self {
            Self::Producer(t) => t.close(),
            _ => Vec::new(),
        }
    }
}

/// Running totals.
#[derive(Debug, Default)]
struct Totals {
    cases: u64,
    checked: BTreeMap<&'static str, usize>,
    skipped: usize,
    findings: u64,
    harness_findings: u64,
    problems: Vec<String>,
}

impl Totals {
    fn checked(&self) -> usize {
        self.checked.values().sum()
    }
}

fn stderr_line(text: &str) {
    let text = crate::redact::for_terminal(text);
    let _ = writeln!(std::io::stderr(), "awa-conformance fuzz: {text}");
}

/// `awa-conformance fuzz`: returns the exit code.
///
/// # Errors
/// Usage (3), database (4), schema (5) and harness (6) errors.
pub fn run(args: &FuzzOptions) -> Result<u8, Error> {
    let replay = args.replay.as_ref().map(read_replay).transpose()?;
    let seed = args.seed;
    if replay.is_none() && args.cases.is_none() && args.seconds.is_none() {
        return Err(Error::Usage(
            "fuzz needs a budget: --cases N or --seconds S (or --replay FILE)".to_owned(),
        ));
    }
    let stop: Stop = Arc::new(OnceLock::new());
    let s = Arc::clone(&stop);
    let _ = crate::interrupt::on_signal(move |reason| {
        let _ = s.set(reason);
    });
    let mut target = match open(args, &stop) {
        Ok(t) => t,
        Err(e) => {
            crate::interrupt::clear();
            return Err(e);
        }
    };
    let result = match (replay, seed) {
        (Some(vectors), _) => drive_replay(&mut target, &vectors, &stop, args),
        (None, Some(seed)) => drive(&mut target, seed, &stop, args),
        (None, None) => Err(Error::Usage(
            "fuzz needs --seed N or --replay FILE".to_owned(),
        )),
    };
    let problems = target.close();
    crate::interrupt::clear();
    if !problems.is_empty() && matches!(result, Ok(exit::SUCCESS)) {
        return Err(Error::Harness {
            detail: problems.join("; "),
        });
    }
    for p in problems {
        stderr_line(&format!("warning: {p}"));
    }
    result
}

fn open(args: &FuzzOptions, stop: &Stop) -> Result<Target, Error> {
    if let Some(cmd) = &args.adapter {
        // As in a run: the adapter gets --dsn as given (validated first), never the PG* guess.
        if args.dsn.is_some() {
            Dsn::resolve(args.dsn.as_deref())?;
        }
        return Ok(Target::Adapter(Box::new(adapter::AdapterTarget::new(
            cmd,
            args.dsn.clone(),
            args.adapter_timeout,
        )?)));
    }
    let dsn = Dsn::resolve(args.dsn.as_deref())?;
    let Some(dsn) = dsn else {
        return Err(Error::Usage(
            "fuzz needs a target: --dsn URL (or DATABASE_URL) for a database's contract \
             functions (and the database --producer CMD enqueues into), or --adapter CMD for \
             a producer's functions"
                .to_owned(),
        ));
    };
    if let Some(cmd) = &args.producer {
        // The producer gets --dsn or DATABASE_URL as written (TLS files and options pass
        // through), else the door's own connection string.
        let producer_dsn = args.dsn.clone().or_else(|| {
            std::env::var("DATABASE_URL")
                .ok()
                .filter(|d| !d.trim().is_empty())
        });
        return Ok(Target::Producer(Box::new(producer::ProducerTarget::open(
            cmd,
            dsn,
            producer_dsn,
            args,
            stop,
        )?)));
    }
    Ok(Target::Db(db::DbTarget::open(
        dsn,
        &args.schema,
        args.plain_sessions,
    )?))
}

/// Generate and check cases until the budget, a stop or `--max-findings`.
fn drive(target: &mut Target, seed: u64, stop: &Stop, args: &FuzzOptions) -> Result<u8, Error> {
    let started = Instant::now();
    let deadline = args.seconds.map(|s| started + Duration::from_secs(s));
    let end = args.cases.map(|n| args.start.saturating_add(n));
    stderr_line(&format!(
        "seed {seed} (generator {}), cases from {}{}, target {}",
        gen::GENERATOR,
        args.start,
        match (end, args.seconds) {
            (Some(e), _) => format!(" to {}", e.saturating_sub(1)),
            (None, Some(s)) => format!(" for {s}s"),
            (None, None) => String::new(),
        },
        target.describe()
    ));
    let mut totals = Totals::default();
    let mut next = args.start;
    let mut batch_cases = FIRST_BATCH;
    let mut last_progress = started;
    loop {
        if stop.get().is_some()
            || end.is_some_and(|e| next >= e)
            || deadline.is_some_and(|d| Instant::now() >= d)
            || totals.findings + totals.harness_findings >= args.max_findings
            || !totals.problems.is_empty()
        {
            break;
        }
        let n = end.map_or(batch_cases, |e| batch_cases.min(e - next));
        let families = target.families();
        if families.is_empty() {
            break;
        }
        let mut batch = Vec::new();
        for case in next..next + n {
            for family in &families {
                batch.push(
                    gen::vector(seed, case, *family).ok_or_else(|| Error::Harness {
                        detail: format!(
                            "the fuzz generator made an input the core refuses (seed {seed} case \
                         {case} {family}); please report this kit bug"
                        ),
                    })?,
                );
            }
        }
        let t = Instant::now();
        let checked = target.check(&batch, stop)?;
        if t.elapsed() < Duration::from_secs(1) {
            batch_cases = (batch_cases * 2).min(MAX_BATCH);
        }
        if stop.get().is_none() {
            totals.cases += n;
        }
        record(
            &mut totals,
            checked,
            stop,
            &target.describe(),
            args.max_findings,
        );
        next += n;
        if last_progress.elapsed() >= PROGRESS_EVERY {
            last_progress = Instant::now();
            stderr_line(&progress(&totals, started));
        }
    }
    finish(&totals, started, stop, &format!("seed {seed}"))
}

fn progress(totals: &Totals, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(0.001);
    format!(
        "{} cases, {} vectors checked ({:.0}/s), {} disagreements",
        totals.cases,
        totals.checked(),
        totals.checked() as f64 / secs,
        totals.findings
    )
}

/// Add a batch's results to the totals and print its findings.
fn record(totals: &mut Totals, checked: Checked, stop: &Stop, target: &str, max: u64) {
    for (f, n) in checked.checked {
        *totals.checked.entry(f).or_default() += n;
    }
    totals.skipped += checked.skipped;
    totals.problems.extend(checked.problems);
    for f in checked.findings {
        // `--max-findings` bounds what is printed, not only when the run stops.
        if totals.findings + totals.harness_findings >= max {
            break;
        }
        if f.harness {
            totals.harness_findings += 1;
        } else {
            totals.findings += 1;
        }
        if let Err(reason) = print_finding(&f, target) {
            let _ = stop.set(reason);
        }
    }
}

/// Print one finding: a line on stderr, the whole finding (with its vector) on stdout.
fn print_finding(f: &Finding, target: &str) -> Result<(), StopReason> {
    let g = &f.generated;
    let seed = g.seed;
    stderr_line(&format!(
        "{} in {} (seed {seed} case {}, vector {}): {}\n  expected: {}\n  actual:   {}",
        if f.harness {
            "harness failure"
        } else {
            "disagreement"
        },
        g.family,
        g.case,
        g.vector.id,
        f.message,
        crate::shorten::display(&f.expected),
        crate::shorten::display(&f.actual),
    ));
    let int = |n: u64| i64::try_from(n).map_or_else(|_| Json::Str(n.to_string()), Json::Int);
    let doc = Json::Obj(vec![
        ("seed".to_owned(), int(seed)),
        ("generator".to_owned(), Json::Int(i64::from(gen::GENERATOR))),
        ("case".to_owned(), int(g.case)),
        ("target".to_owned(), Json::str(target)),
        (
            "finding".to_owned(),
            Json::str(crate::redact::redact_secrets(&f.message)),
        ),
        ("expected".to_owned(), Json::from_serde(&f.expected)),
        ("actual".to_owned(), Json::from_serde(&f.actual)),
        ("family".to_owned(), Json::str(g.family.as_str())),
        ("vector".to_owned(), g.vector.to_json()),
    ]);
    let mut out = std::io::stdout().lock();
    out.write_all(render(&doc).as_bytes())
        .and_then(|()| out.flush())
        .map_err(|_| StopReason::StdoutClosed)
}

/// The summary line and the exit code.
fn finish(totals: &Totals, started: Instant, stop: &Stop, what: &str) -> Result<u8, Error> {
    let families: Vec<String> = totals
        .checked
        .iter()
        .map(|(f, n)| format!("{f} {n}"))
        .collect();
    let summary = format!(
        "{what}: {} ({}), {} skipped by the target, {} inputs the target failed on, in {:.1}s",
        progress(totals, started),
        families.join(", "),
        totals.skipped,
        totals.harness_findings,
        started.elapsed().as_secs_f64()
    );
    if let Some(reason) = stop.get() {
        stderr_line(&format!(
            "stopped: {} (nothing was committed); {summary}",
            reason.describe()
        ));
        return Ok(reason.exit_code());
    }
    if !totals.problems.is_empty() || totals.harness_findings > 0 {
        stderr_line(&format!("harness error (exit 6): {summary}"));
        return Err(Error::Harness {
            detail: if totals.problems.is_empty() {
                "the adapter failed on the inputs printed above".to_owned()
            } else {
                totals.problems.join("; ")
            },
        });
    }
    if totals.findings > 0 {
        stderr_line(&format!("nonconformant (exit 1): {summary}"));
        return Ok(exit::NONCONFORMANT);
    }
    if totals.checked() == 0 {
        stderr_line(&format!("nothing checked (exit 3): {summary}"));
        return Err(Error::Usage(
            "the target checked no fuzz vector (it declares none of the families, or skipped \
             every one), so nothing was checked"
                .to_owned(),
        ));
    }
    stderr_line(&format!("no disagreement (exit 0): {summary}"));
    Ok(exit::SUCCESS)
}

/// Check the findings of an earlier run again.
fn drive_replay(
    target: &mut Target,
    vectors: &[Generated],
    stop: &Stop,
    args: &FuzzOptions,
) -> Result<u8, Error> {
    let started = Instant::now();
    stderr_line(&format!(
        "replaying {} vector(s) against {}",
        vectors.len(),
        target.describe()
    ));
    let mut totals = Totals {
        cases: vectors.len() as u64,
        ..Totals::default()
    };
    let checked = target.check(vectors, stop)?;
    record(
        &mut totals,
        checked,
        stop,
        &target.describe(),
        args.max_findings,
    );
    finish(&totals, started, stop, "replay")
}

/// Read findings (as printed by `fuzz`) or bare `{"family", "vector"}` documents: each vector
/// must decode as its family's and be what the core computes, under its content ID.
fn read_replay(path: &PathBuf) -> Result<Vec<Generated>, Error> {
    let label = path.display().to_string();
    let text = if label == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s).map(|_| s)
    } else {
        std::fs::read_to_string(path)
    }
    .map_err(|source| Error::Io {
        action: "cannot read",
        path: path.clone(),
        source,
    })?;
    let bad = |detail: String| Error::Usage(format!("--replay {label}: {detail}"));
    let mut out = Vec::new();
    for (i, doc) in serde_json::Deserializer::from_str(&text)
        .into_iter::<JsonValue>()
        .enumerate()
    {
        let doc = doc.map_err(|e| bad(format!("document {} is not JSON: {e}", i + 1)))?;
        let family = doc
            .get("family")
            .and_then(JsonValue::as_str)
            .and_then(Family::parse)
            .ok_or_else(|| bad(format!("document {} has no known \"family\"", i + 1)))?;
        let vector = doc
            .get("vector")
            .ok_or_else(|| bad(format!("document {} has no \"vector\"", i + 1)))?;
        let envelope = serde_json::json!({
            "format": "awa-conformance-vectors",
            "format_version": 1,
            "family": family.as_str(),
            "contract_version": awa_conformance_core::CONTRACT_VERSION,
            "description": "fuzz replay",
            "retired": [],
            "vectors": [vector],
        });
        let file = VectorFile::parse(&label, Some(family), &envelope.to_string())
            .map_err(|e| bad(e.to_string()))?;
        for v in file.vectors {
            check_vector(family, &v).map_err(|m| {
                bad(format!(
                    "vector {} is not what the core computes ({} differs); a finding's vector \
                     is printed by the core, so this one was edited",
                    m.vector_id, m.field
                ))
            })?;
            let id = content_id(
                family,
                &v.case.input_json().to_serde(),
                &v.case.expected_json().to_serde(),
            )
            .map_err(|e| bad(e.to_string()))?;
            if id != v.id {
                return Err(bad(format!(
                    "vector {} has the content ID {id}; fix the \"id\"",
                    v.id
                )));
            }
            out.push(Generated {
                seed: doc.get("seed").and_then(JsonValue::as_u64).unwrap_or(0),
                case: doc.get("case").and_then(JsonValue::as_u64).unwrap_or(0),
                family,
                vector: v,
            });
        }
    }
    if out.is_empty() {
        return Err(bad("no vector to replay".to_owned()));
    }
    Ok(out)
}
