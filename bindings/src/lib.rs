//! The `awa_conformance._native` extension module: thin PyO3 wrappers over awa-conformance-core.
//!
//! Each function converts its arguments (`convert`), calls the core and maps errors
//! (`errors`); no contract logic lives here. `_run_cli` hands the whole command line to the
//! Rust runner library, so the wheel's `awa-conformance` command is the runner itself;
//! `producer` runs the runner's producer engine on a Python callable. The public Python API, stubs and docs are in
//! `python/awa_conformance/`.

use awa_conformance_core as core;
use awa_conformance_vectors::to_hex as hex;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString, PyTuple};

mod convert;
mod errors;
mod producer;

use convert::{bytes_param, int_param, str_param, to_value, type_name};
use errors::{BindingError, Class};

const WIDTH_RANGE: &str = "1..=64";
const PARTITIONS_RANGE: &str = "1..=32767";

fn width_param(obj: &Bound<'_, PyAny>, param: &'static str) -> Result<core::Width, BindingError> {
    Ok(core::Width::new(int_param(
        obj,
        param,
        Class::InvalidWidth,
        WIDTH_RANGE,
    )?)?)
}

fn optional<'a, 'py, T>(
    obj: Option<&'a Bound<'py, PyAny>>,
    f: impl FnOnce(&'a Bound<'py, PyAny>) -> Result<T, BindingError>,
) -> Result<Option<T>, BindingError> {
    match obj {
        Some(o) if !o.is_none() => f(o).map(Some),
        _ => Ok(None),
    }
}

/// The JSON `null` sentinel for `unique_key(args=JSON_NULL)`: `args=None` means "no args
/// field", which hashes differently from an args field holding `null`.
#[pyclass(frozen, module = "awa_conformance", name = "JsonNull")]
pub(crate) struct JsonNull;

#[pymethods]
impl JsonNull {
    fn __repr__(&self) -> &'static str {
        "awa_conformance.JSON_NULL"
    }
}

/// The authoritative routing of one job (contract v1 D3).
#[pyclass(frozen, eq, hash, module = "awa_conformance", name = "Route")]
#[derive(PartialEq, Eq, Hash)]
struct Route {
    source: &'static str,
    shard: Option<u8>,
    digest: Option<[u8; core::DIGEST_LEN]>,
}

#[pymethods]
impl Route {
    /// Which precedence rule applied: "ordering_key", "concurrency_key" or "rotor".
    #[getter]
    fn source(&self) -> &'static str {
        self.source
    }

    /// The enqueue shard, or None for the rotor (any shard in [0, width) conforms).
    #[getter]
    fn shard(&self) -> Option<u8> {
        self.shard
    }

    /// The stored 32-byte concurrency digest, or None.
    #[getter]
    fn concurrency_digest<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.digest.as_ref().map(|d| PyBytes::new(py, d))
    }

    fn __repr__(&self) -> String {
        let shard = self
            .shard
            .map_or_else(|| "None".to_owned(), |s| s.to_string());
        let digest = self.digest.as_ref().map_or_else(
            || "None".to_owned(),
            |d| format!("bytes.fromhex('{}')", hex(d)),
        );
        format!(
            "Route(source='{}', shard={shard}, concurrency_digest={digest})",
            self.source
        )
    }
}

/// unique_key(kind, queue=None, args=None, period_bucket=None) -> bytes
///
/// The 16-byte released-Awa dedupe key. args=None means absent; pass JSON_NULL for null.
#[pyfunction]
#[pyo3(signature = (kind, queue=None, args=None, period_bucket=None))]
fn unique_key<'py>(
    py: Python<'py>,
    kind: &Bound<'py, PyAny>,
    queue: Option<&Bound<'py, PyAny>>,
    args: Option<&Bound<'py, PyAny>>,
    period_bucket: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (kind, queue, args, bucket) = unique_inputs(kind, queue, args, period_bucket)?;
    let key = core::unique_key(&kind, queue.as_deref(), args.as_ref(), bucket)
        .map_err(BindingError::from)?;
    Ok(PyBytes::new(py, &key))
}

/// unique_key_preimage(kind, queue=None, args=None, period_bucket=None) -> bytes
///
/// The exact bytes unique_key hashes (debug layer).
#[pyfunction]
#[pyo3(signature = (kind, queue=None, args=None, period_bucket=None))]
fn unique_key_preimage<'py>(
    py: Python<'py>,
    kind: &Bound<'py, PyAny>,
    queue: Option<&Bound<'py, PyAny>>,
    args: Option<&Bound<'py, PyAny>>,
    period_bucket: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let (kind, queue, args, bucket) = unique_inputs(kind, queue, args, period_bucket)?;
    let pre = core::unique_key_preimage(&kind, queue.as_deref(), args.as_ref(), bucket)
        .map_err(BindingError::from)?;
    Ok(PyBytes::new(py, &pre))
}

type UniqueInputs<'a> = (
    std::borrow::Cow<'a, str>,
    Option<std::borrow::Cow<'a, str>>,
    Option<core::Value>,
    Option<i64>,
);

fn unique_inputs<'a, 'py>(
    kind: &'a Bound<'py, PyAny>,
    queue: Option<&'a Bound<'py, PyAny>>,
    args: Option<&'a Bound<'py, PyAny>>,
    period_bucket: Option<&'a Bound<'py, PyAny>>,
) -> Result<UniqueInputs<'a>, BindingError> {
    Ok((
        str_param(kind, "kind")?,
        optional(queue, |q| str_param(q, "queue"))?,
        optional(args, |a| to_value(a, "args"))?,
        optional(period_bucket, |p| {
            int_param(p, "period_bucket", Class::IntegerOutOfRange, "i64")
        })?,
    ))
}

/// canonical_json(obj) -> bytes
///
/// Awa canonical JSON v1 of a dict/list/str/int/float/bool/None value.
#[pyfunction]
#[pyo3(signature = (obj, /))]
fn canonical_json<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let value = to_value(obj, "obj")?;
    let bytes = core::canonical_json(&value).map_err(BindingError::from)?;
    Ok(PyBytes::new(py, &bytes))
}

/// ordering_key_hash64(key) -> int
///
/// The released ordering-key hash (FNV constants, multiply-then-add), as an unsigned 64-bit int.
#[pyfunction]
#[pyo3(signature = (key, /))]
fn ordering_key_hash64(key: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(core::ordering_key_hash64(bytes_param(key, "key")?))
}

/// ordering_shard(key, width) -> int
///
/// ordering_key_hash64(key) mod width, width in 1..=64.
#[pyfunction]
#[pyo3(signature = (key, width))]
fn ordering_shard(key: &Bound<'_, PyAny>, width: &Bound<'_, PyAny>) -> PyResult<u8> {
    let key = bytes_param(key, "key")?;
    Ok(core::ordering_shard(key, width_param(width, "width")?))
}

/// partition_hash64(key) -> int
///
/// The SplitMix64-finalised partition hash of an ordering key.
#[pyfunction]
#[pyo3(signature = (key, /))]
fn partition_hash64(key: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(core::partition_hash64(bytes_param(key, "key")?))
}

/// partition_for_ordering_key(key, partitions) -> int
///
/// The PartitionedQueue partition of an ordering key, partitions in 1..=32767.
#[pyfunction]
#[pyo3(signature = (key, partitions))]
fn partition_for_ordering_key(
    key: &Bound<'_, PyAny>,
    partitions: &Bound<'_, PyAny>,
) -> PyResult<u16> {
    let key = bytes_param(key, "key")?;
    let n = int_param(
        partitions,
        "partitions",
        Class::InvalidPartitions,
        PARTITIONS_RANGE,
    )?;
    let partitions = core::Partitions::new(n).map_err(BindingError::from)?;
    Ok(core::partition_for_ordering_key(key, partitions))
}

/// physical_queue_name(logical, index) -> str
///
/// The logical name for partition 0, else "{logical}__p{index}"; index in 0..=32766.
#[pyfunction]
#[pyo3(signature = (logical, index))]
fn physical_queue_name(logical: &Bound<'_, PyAny>, index: &Bound<'_, PyAny>) -> PyResult<String> {
    const RANGE: &str = "0..=32766 (a partition index is below the partition count)";
    let logical = str_param(logical, "logical")?;
    let i = int_param(index, "index", Class::InvalidPartitions, RANGE)?;
    let i = u16::try_from(i)
        .ok()
        .filter(|i| *i < core::MAX_PARTITIONS)
        .ok_or_else(|| BindingError::IntRange {
            class: Class::InvalidPartitions,
            param: "index",
            value: i.to_string(),
            range: RANGE,
        })?;
    Ok(core::physical_queue_name(&logical, i))
}

/// A concurrency key: bytes, or str meaning its UTF-8 bytes.
fn key_bytes<'a>(
    obj: &'a Bound<'_, PyAny>,
    param: &'static str,
) -> Result<std::borrow::Cow<'a, [u8]>, BindingError> {
    if let Ok(s) = obj.cast::<PyString>() {
        return str_param(s.as_any(), param).map(|s| match s {
            std::borrow::Cow::Borrowed(s) => std::borrow::Cow::Borrowed(s.as_bytes()),
            std::borrow::Cow::Owned(s) => std::borrow::Cow::Owned(s.into_bytes()),
        });
    }
    obj.cast::<PyBytes>()
        .map(|b| std::borrow::Cow::Borrowed(b.as_bytes()))
        .map_err(|_| BindingError::ParamType {
            param,
            expected: "bytes or str",
            got: type_name(obj),
        })
}

/// concurrency_digest(key) -> bytes
///
/// SHA-256(CONCURRENCY_DOMAIN_TAG || key); a str key means its UTF-8 bytes.
#[pyfunction]
#[pyo3(signature = (key, /))]
fn concurrency_digest<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = key_bytes(key, "key")?;
    Ok(PyBytes::new(py, &core::concurrency_digest(&key)))
}

/// concurrency_preimage(key) -> bytes
///
/// CONCURRENCY_DOMAIN_TAG || key: the bytes concurrency_digest hashes (debug layer).
#[pyfunction]
#[pyo3(signature = (key, /))]
fn concurrency_preimage<'py>(
    py: Python<'py>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let key = key_bytes(key, "key")?;
    Ok(PyBytes::new(py, &core::concurrency_preimage(&key)))
}

/// concurrency_shard(digest, width) -> int
///
/// First 8 digest bytes as a big-endian u64, mod width; digest must be 32 bytes.
#[pyfunction]
#[pyo3(signature = (digest, width))]
fn concurrency_shard(digest: &Bound<'_, PyAny>, width: &Bound<'_, PyAny>) -> PyResult<u8> {
    let bytes = bytes_param(digest, "digest")?;
    let digest: &[u8; core::DIGEST_LEN] = bytes
        .try_into()
        .map_err(|_| BindingError::DigestLength(bytes.len()))?;
    Ok(core::concurrency_shard(
        digest,
        width_param(width, "width")?,
    ))
}

/// route(width, ordering_key=None, concurrency_key=None) -> Route
///
/// The v1 routing precedence: ordering key, else concurrency key, else rotor. b"" is a key.
#[pyfunction]
#[pyo3(signature = (width, ordering_key=None, concurrency_key=None))]
fn route(
    width: &Bound<'_, PyAny>,
    ordering_key: Option<&Bound<'_, PyAny>>,
    concurrency_key: Option<&Bound<'_, PyAny>>,
) -> PyResult<Route> {
    let width = width_param(width, "width")?;
    let ok = optional(ordering_key, |k| bytes_param(k, "ordering_key"))?;
    let ck = optional(concurrency_key, |k| bytes_param(k, "concurrency_key"))?;
    let r = core::route(width, ok, ck).map_err(BindingError::from)?;
    Ok(Route {
        source: r.source.as_str(),
        shard: r.enqueue_shard,
        digest: r.concurrency_digest,
    })
}

/// move_shard(retained, destination_width) -> int
///
/// The shard a job keeps when moved to another queue: retained mod destination_width.
#[pyfunction]
#[pyo3(signature = (retained, destination_width))]
fn move_shard(retained: &Bound<'_, PyAny>, destination_width: &Bound<'_, PyAny>) -> PyResult<u8> {
    let retained = int_param(retained, "retained", Class::InvalidShard, "0..=63")?;
    let width = width_param(destination_width, "destination_width")?;
    Ok(core::move_shard(retained, width).map_err(BindingError::from)?)
}

/// unique_states_bits(mask) -> str
///
/// The bit(8) text of a unique_states mask (0..=255): character i is bit i.
#[pyfunction]
#[pyo3(signature = (mask, /))]
fn unique_states_bits(mask: &Bound<'_, PyAny>) -> PyResult<String> {
    const RANGE: &str = "0..=255 (one bit per job state)";
    let m = int_param(mask, "mask", Class::InvalidUniqueStates, RANGE)?;
    let m = u8::try_from(m).map_err(|_| BindingError::IntRange {
        class: Class::InvalidUniqueStates,
        param: "mask",
        value: m.to_string(),
        range: RANGE,
    })?;
    Ok(core::unique_states_bits(m))
}

/// parse_unique_states_bits(bits) -> int
///
/// Inverse of unique_states_bits: exactly eight '0'/'1' characters.
#[pyfunction]
#[pyo3(signature = (bits, /))]
fn parse_unique_states_bits(bits: &Bound<'_, PyAny>) -> PyResult<u8> {
    let bits = str_param(bits, "bits")?;
    Ok(core::parse_unique_states_bits(&bits).map_err(BindingError::from)?)
}

/// _embedded_manifests() -> list[str]
///
/// The manifests of the vector releases compiled into this module (v1, v1.1), oldest first.
#[pyfunction]
fn _embedded_manifests() -> Vec<&'static str> {
    awa_conformance_vectors::EMBEDDED
        .iter()
        .filter_map(|(_, files)| files.iter().find(|(n, _)| *n == "manifest.json"))
        .map(|(_, text)| *text)
        .collect()
}

/// _embedded_vectors_json() -> str
///
/// Every embedded vector (v1 then v1.1) as one JSON array: each vector object of its file with
/// `family` and `release` added and the errata applied (`description`, `tags`, `erratum`).
#[pyfunction]
fn _embedded_vectors_json() -> PyResult<String> {
    let set = awa_conformance_vectors::embedded()
        .map_err(|e| PyRuntimeError::new_err(format!("embedded vectors: {e}")))?;
    Ok(set.to_json_list().to_string())
}

/// _run_cli(argv: list[str]) -> int
///
/// The `awa-conformance` command itself (the Rust runner's `main`, same parsing, output and
/// exit codes); `argv[0]` is the program name. The GIL is released for the whole run, which
/// may take seconds and starts its own threads. The console script
/// `awa_conformance._cli:main` calls it.
#[pyfunction]
fn _run_cli(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| awa_conformance_runner::main_with_args(&argv))
}

/// The Python module `awa_conformance._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Route>()?;
    m.add_class::<JsonNull>()?;
    m.add("JSON_NULL", Bound::new(py, JsonNull)?)?;
    m.add_function(wrap_pyfunction!(unique_key, m)?)?;
    m.add_function(wrap_pyfunction!(unique_key_preimage, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_json, m)?)?;
    m.add_function(wrap_pyfunction!(ordering_key_hash64, m)?)?;
    m.add_function(wrap_pyfunction!(ordering_shard, m)?)?;
    m.add_function(wrap_pyfunction!(partition_hash64, m)?)?;
    m.add_function(wrap_pyfunction!(partition_for_ordering_key, m)?)?;
    m.add_function(wrap_pyfunction!(physical_queue_name, m)?)?;
    m.add_function(wrap_pyfunction!(concurrency_digest, m)?)?;
    m.add_function(wrap_pyfunction!(concurrency_preimage, m)?)?;
    m.add_function(wrap_pyfunction!(concurrency_shard, m)?)?;
    m.add_function(wrap_pyfunction!(route, m)?)?;
    m.add_function(wrap_pyfunction!(move_shard, m)?)?;
    m.add_function(wrap_pyfunction!(unique_states_bits, m)?)?;
    m.add_function(wrap_pyfunction!(parse_unique_states_bits, m)?)?;
    m.add_function(wrap_pyfunction!(_embedded_manifests, m)?)?;
    m.add_function(wrap_pyfunction!(_embedded_vectors_json, m)?)?;
    m.add_function(wrap_pyfunction!(_run_cli, m)?)?;
    m.add_class::<producer::ProducerReport>()?;
    m.add_function(wrap_pyfunction!(producer::_producer_trial_names, m)?)?;
    m.add_function(wrap_pyfunction!(producer::_load_expected_failures, m)?)?;
    m.add_function(wrap_pyfunction!(producer::_check_producer, m)?)?;
    m.add_function(wrap_pyfunction!(producer::_session_dsn, m)?)?;
    m.add(
        "CONCURRENCY_DOMAIN_TAG",
        PyBytes::new(py, core::CONCURRENCY_DOMAIN_TAG),
    )?;
    m.add("CONTRACT_VERSION", core::CONTRACT_VERSION)?;
    m.add("JOB_STATES", PyTuple::new(py, core::JOB_STATES)?)?;
    m.add("DEFAULT_UNIQUE_STATES", core::DEFAULT_UNIQUE_STATES)?;
    m.add("MAX_WIDTH", core::MAX_WIDTH)?;
    m.add("MAX_KEY_LEN", core::MAX_KEY_LEN)?;
    m.add("MAX_DEPTH", core::MAX_DEPTH)?;
    m.add("MAX_PARTITIONS", core::MAX_PARTITIONS)?;
    m.add("UNIQUE_KEY_LEN", core::UNIQUE_KEY_LEN)?;
    m.add("DIGEST_LEN", core::DIGEST_LEN)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
