//! The producer engine from Python: a Python callable as the runner's [`Producer`], and
//! `_check_producer`, which runs the runner's own engine on it with the GIL released.
//!
//! No contract rule lives here: the cases, the judge, the expected-failures matcher and the
//! report writers are the runner's. The callable speaks the protocol's JSON (one request in,
//! one answer out, `awa_conformance.producer._Call`), and its answer is parsed by the same
//! [`EnqueueAnswer`] parser as a subprocess producer's line, so both kinds of producer are
//! judged by one code path.

use std::sync::Arc;
use std::time::Duration;

use awa_conformance_runner::contract::open;
use awa_conformance_runner::error::Error;
use awa_conformance_runner::expected::ExpectedFailures;
use awa_conformance_runner::outcome::{RunContext, PROVENANCE_DATABASE};
use awa_conformance_runner::pg::{Dsn, Pg};
use awa_conformance_runner::producer::{
    self, CheckOptions, EnqueueAnswer, EnqueueRequest, Hello, Producer, ProducerFault,
};
use awa_conformance_runner::protocol;
use awa_conformance_runner::report::{self, Report, Summary};
use pyo3::exceptions::{PyRuntimeError, PyTimeoutError, PyValueError};
use pyo3::prelude::*;

/// A Python callable `(request_json: str) -> answer_json: str` as a producer.
struct PyProducer {
    call: Py<PyAny>,
    hello: Hello,
}

impl PyProducer {
    fn new(call: Py<PyAny>, name: String, protocol: u64) -> Self {
        Self {
            call,
            hello: Hello {
                protocol,
                implementation: protocol::Implementation {
                    name,
                    version: "python".to_owned(),
                },
                // A callable can refuse (ProducerRefused, a driver error), so it is sent the
                // expected-refusal cases too, like a program declaring `errors`.
                // The Python layer decodes typed values (the `nested` form too) before the
                // callable sees them, whatever the protocol.
                capabilities: vec![
                    protocol::ENQUEUE_CAPABILITY.to_owned(),
                    protocol::ERRORS_CAPABILITY.to_owned(),
                    protocol::NESTED_CAPABILITY.to_owned(),
                ],
                // A callable answers one request at a time.
                max_in_flight: None,
            },
        }
    }
}

impl Producer for PyProducer {
    fn hello(&mut self) -> Result<Hello, ProducerFault> {
        Ok(self.hello.clone())
    }

    fn enqueue(
        &mut self,
        request: &EnqueueRequest,
        timeout: Duration,
    ) -> Result<EnqueueAnswer, ProducerFault> {
        // The request is already in this producer's protocol (the engine's `for_protocol`).
        let text = serde_json::to_string(request)
            .map_err(|e| ProducerFault::Other(format!("cannot encode the request: {e}")))?;
        // The GIL is taken only for the call itself; the engine's database work runs detached.
        let answer = Python::attach(|py| -> PyResult<String> {
            self.call.bind(py).call1((text,))?.extract()
        })
        .map_err(|e| {
            Python::attach(|py| {
                if e.is_instance_of::<PyTimeoutError>(py) {
                    ProducerFault::Timeout(timeout)
                } else {
                    ProducerFault::Other(format!("the Python producer failed: {e}"))
                }
            })
        })?;
        let (seq, answer) = EnqueueAnswer::parse_line(&answer).map_err(ProducerFault::Protocol)?;
        if seq != request.seq {
            return Err(ProducerFault::Protocol(format!(
                "answer for seq {seq}, expected {}",
                request.seq
            )));
        }
        Ok(answer)
    }

    fn restart(&mut self, _cause: &ProducerFault) -> Result<Hello, ProducerFault> {
        // `_Call.restart` waits (bounded) for a call abandoned by a timeout, so that a late
        // insert lands while the run can still sweep it; the next call gets a fresh thread.
        Python::attach(|py| self.call.bind(py).call_method0("restart").map(drop))
            .map_err(|e| ProducerFault::Other(format!("the Python producer failed: {e}")))?;
        Ok(self.hello.clone())
    }
}

/// What `_check_producer` runs, with the GIL released: the CLI's own pieces in the CLI's
/// order (DSN, preflight, the engine's [`producer::check`], the run's sweep, the report and
/// its exit code), so a check from Python and `awa-conformance --producer` agree.
fn check_dsn(
    dsn: &str,
    schema: &str,
    producer_role: &str,
    mut producer: Box<dyn Producer>,
    expected: ExpectedFailures,
    options: &CheckOptions,
    argv: &[String],
) -> Result<Report, Error> {
    let started = std::time::Instant::now();
    let started_at = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let (set, vectors_source) = awa_conformance_runner::vector_set::load_vectors(None)?;
    let dsn = Dsn::resolve(Some(dsn))?.ok_or_else(|| {
        Error::Usage("check_producer needs a DSN: pass dsn=\"postgresql://...\"".to_owned())
    })?;
    let ctx = RunContext::new(expected.clone());
    ctx.set_provenance(
        PROVENANCE_DATABASE,
        format!("dsn ({})", dsn.source().as_str()),
    );
    let schema = awa_conformance_runner::pg::SchemaName::new(schema).map_err(Error::Usage)?;
    let db = open::preflight(
        &ctx,
        Pg::new(dsn)?,
        &schema,
        producer_role,
        None,
        true,
        awa_conformance_runner::contract::server::untested_server_allowed_by_env(),
    )?;
    // The kit's own calls of the functions under test run under the callers' settings unless
    // plain_sessions=True, as the CLI's do; the callable's connection is its own, so the
    // provenance says how to put it under the same settings.
    db.plain_sessions
        .store(options.plain_sessions, std::sync::atomic::Ordering::SeqCst);
    ctx.set_provenance(
        awa_conformance_runner::contract::target::CALLERS_PROVENANCE,
        if options.plain_sessions {
            awa_conformance_runner::contract::target::plain_sessions_named("plain_sessions=True")
        } else {
            db.caller_settings_provenance()
        },
    );
    ctx.set_provenance(
        producer::SESSION_PROVENANCE,
        "the insert callable's own connection, not set by check_producer: open it with \
         awa_conformance.session_dsn(dsn) to run it under the callers' settings"
            .to_owned(),
    );
    let hello = producer.hello().map_err(|e| Error::Harness {
        detail: e.to_string(),
    })?;
    let name = format!(
        "{} {}",
        hello.implementation.name, hello.implementation.version
    );
    let results = producer::check(producer, &db, &set, expected, options);
    // Whatever a case left (an abandoned call's late insert): the run's own sweep.
    let swept = db.cleanup();
    let cases = results?;
    let mut run_errors = Vec::new();
    if let Err(e) = swept {
        run_errors.push(format!("removing this run's rows failed: {e}"));
    }
    ctx.set_provenance(producer::SUITE, name);
    ctx.set_provenance(producer::FIELDS_PROVENANCE, hello.fields_judged());
    let total = u64::try_from(producer::trial_names(&set).len()).unwrap_or(u64::MAX);
    let filtered_out = total.saturating_sub(u64::try_from(cases.len()).unwrap_or(u64::MAX));
    let summary = Summary::of(
        &cases,
        filtered_out,
        started.elapsed().as_secs_f64() * 1000.0,
    );
    Ok(awa_conformance_runner::run::library_report(
        &ctx,
        &set,
        vectors_source,
        started_at,
        argv,
        summary,
        run_errors,
        cases,
    ))
}

/// The runner's report of one producer check, with its three renderings.
#[pyclass(frozen, module = "awa_conformance._native", name = "ProducerReport")]
pub(crate) struct ProducerReport {
    report: Report,
}

#[pymethods]
impl ProducerReport {
    /// The JSON report (`awa-conformance-report` v1), exactly as `--report-json` writes it.
    fn json(&self) -> PyResult<String> {
        report::json::render(&self.report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// The JUnit XML report, exactly as `--junit` writes it.
    fn junit(&self) -> PyResult<String> {
        report::junit::render(&self.report).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// The Markdown summary, exactly as `--markdown` writes it.
    fn markdown(&self) -> String {
        report::markdown::render(&self.report)
    }
}

/// _session_dsn(dsn) -> str
///
/// `dsn` as a `postgresql://` URL whose sessions start under the callers' settings
/// (docs/contract.md §12.4): what an insert callable connects with to be checked as the CLI
/// checks a producer process. RuntimeError (naming the fix) for a DSN that cannot be read.
#[pyfunction]
pub(crate) fn _session_dsn(dsn: &str) -> PyResult<String> {
    let dsn = Dsn::resolve(Some(dsn))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?
        .ok_or_else(|| {
            PyRuntimeError::new_err("session_dsn needs a DSN: pass \"postgresql://...\"")
        })?;
    Ok(awa_conformance_runner::contract::target::caller_session_url(&dsn))
}

/// _producer_trial_names() -> list[str]
///
/// Every producer case name of the embedded vectors, in the engine's order.
#[pyfunction]
pub(crate) fn _producer_trial_names() -> PyResult<Vec<String>> {
    let set = awa_conformance_vectors::embedded()
        .map_err(|e| PyRuntimeError::new_err(format!("embedded vectors: {e}")))?;
    Ok(producer::trial_names(&set))
}

/// _load_expected_failures(path, names) -> list[tuple[str, str]]
///
/// The runner's loader and matcher: the entries of an expected-failures file, each checked to
/// name at least one of `names`. ValueError (message naming the fix) otherwise.
#[pyfunction]
pub(crate) fn _load_expected_failures(
    path: std::path::PathBuf,
    names: Vec<String>,
) -> PyResult<Vec<(String, String)>> {
    let expected =
        ExpectedFailures::load(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    expected
        .check_ids(names.iter().map(String::as_str))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(expected
        .entries()
        .iter()
        .map(|e| (e.id.clone(), e.reason.clone()))
        .collect())
}

/// _check_producer(dsn, schema, producer_role, call, names, expected_failures, timeout, json, junit,
/// markdown, producer_name) -> ProducerReport
///
/// Run the runner's producer engine on `call` (see `awa_conformance.producer._Call`) for the
/// cases in `names` (None: all), with the GIL released except inside `call`. Writes the
/// requested reports. ValueError for a bad expected-failures file, RuntimeError (message
/// naming the fix) when the database or schema cannot be used.
#[pyfunction]
#[pyo3(signature = (dsn, schema, producer_role, call, names, expected_failures, timeout, json, junit, markdown, producer_name, protocol, plain_sessions))]
#[expect(
    clippy::too_many_arguments,
    reason = "one private call site (awa_conformance.producer.run_engine)"
)]
pub(crate) fn _check_producer(
    py: Python<'_>,
    dsn: String,
    schema: String,
    producer_role: String,
    call: Py<PyAny>,
    names: Option<Vec<String>>,
    expected_failures: Option<std::path::PathBuf>,
    timeout: f64,
    json: Option<std::path::PathBuf>,
    junit: Option<std::path::PathBuf>,
    markdown: Option<std::path::PathBuf>,
    producer_name: String,
    protocol: u64,
    plain_sessions: bool,
) -> PyResult<ProducerReport> {
    if !(protocol::PROTOCOL_ENQUEUE..=protocol::PROTOCOL_JOB_FIELDS).contains(&protocol) {
        // RuntimeError: the Python layer maps it to ConformanceError (ValueError means a bad
        // expected-failures file there).
        return Err(PyRuntimeError::new_err(format!(
            "protocol={protocol}: pass {} (the default) or {} (also metadata, max_attempts and \
             run_at with any offset)",
            protocol::PROTOCOL_ENQUEUE,
            protocol::PROTOCOL_JOB_FIELDS
        )));
    }
    // The reports are checked before the run, like the CLI's: a bad path must not cost it.
    let report_options = report::OptionNames {
        json: "json=",
        junit: "junit=",
        markdown: "markdown=",
    };
    let targets = report::Targets {
        json: json.as_deref(),
        junit: junit.as_deref(),
        markdown: markdown.as_deref(),
        names: report_options,
        others: Vec::new(),
    };
    targets
        .check()
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let timeout = Duration::try_from_secs_f64(timeout)
        .ok()
        .filter(|t| !t.is_zero())
        .ok_or_else(|| PyValueError::new_err("timeout must be a positive number of seconds"))?;
    let expected = match &expected_failures {
        Some(path) => {
            ExpectedFailures::load(path).map_err(|e| PyValueError::new_err(e.to_string()))?
        }
        None => ExpectedFailures::default(),
    };
    let filter = names.map(|n| {
        let set: std::collections::BTreeSet<String> = n.into_iter().collect();
        Arc::new(move |name: &str| set.contains(name)) as Arc<dyn Fn(&str) -> bool + Send + Sync>
    });
    let options = CheckOptions {
        enqueue_timeout: timeout,
        filter,
        plain_sessions,
        ..CheckOptions::default()
    };
    let argv = vec![
        "check_producer".to_owned(),
        format!("schema={schema}"),
        format!("insert={producer_name}"),
    ];
    let producer = Box::new(PyProducer::new(call, producer_name, protocol));
    let mut report = py
        .detach(move || {
            check_dsn(
                &dsn,
                &schema,
                &producer_role,
                producer,
                expected,
                &options,
                &argv,
            )
        })
        .map_err(|e| match e {
            Error::ExpectedFailures { .. } => PyValueError::new_err(e.to_string()),
            other => PyRuntimeError::new_err(other.to_string()),
        })?;
    // Every report is written even when one fails; then the error names each that failed.
    let unwritten = report.write_all(&targets);
    if !unwritten.is_empty() {
        let messages: Vec<String> = unwritten.iter().map(ToString::to_string).collect();
        return Err(PyRuntimeError::new_err(messages.join("; ")));
    }
    Ok(ProducerReport { report })
}
