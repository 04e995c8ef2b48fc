//! The one place where core and binding errors become Python exceptions.
//!
//! The exception classes themselves live in `awa_conformance/_errors.py`: they need
//! multiple inheritance (`InvalidWidth(Error, ValueError)`), which `create_exception!` cannot
//! express. They are imported on first use and cached.

use awa_conformance_core::Error as CoreError;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// The Python module that defines the exception hierarchy.
const ERRORS_MODULE: &str = "awa_conformance._errors";

/// A Python exception class of `awa_conformance` (see `_errors.py` for the hierarchy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// `Error(Exception)`: the base; used for core errors this binding does not know yet.
    Error,
    /// `InvalidWidth(Error, ValueError)`.
    InvalidWidth,
    /// `InvalidPartitions(Error, ValueError)`.
    InvalidPartitions,
    /// `InvalidShard(Error, ValueError)`.
    InvalidShard,
    /// `InvalidKey(Error, ValueError)`.
    InvalidKey,
    /// `InvalidUniqueStates(Error, ValueError)`.
    InvalidUniqueStates,
    /// `InvalidArgs(Error, ValueError)`.
    InvalidArgs,
    /// `IntegerOutOfRange(InvalidArgs, OverflowError)`.
    IntegerOutOfRange,
    /// `InvalidType(Error, TypeError)`.
    InvalidType,
    /// `InvalidArgsType(InvalidType)`.
    InvalidArgsType,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Self::Error => "Error",
            Self::InvalidWidth => "InvalidWidth",
            Self::InvalidPartitions => "InvalidPartitions",
            Self::InvalidShard => "InvalidShard",
            Self::InvalidKey => "InvalidKey",
            Self::InvalidUniqueStates => "InvalidUniqueStates",
            Self::InvalidArgs => "InvalidArgs",
            Self::IntegerOutOfRange => "IntegerOutOfRange",
            Self::InvalidType => "InvalidType",
            Self::InvalidArgsType => "InvalidArgsType",
        }
    }
}

/// Everything a binding function can reject, before it becomes a Python exception.
#[derive(Debug)]
pub(crate) enum BindingError {
    /// The core rejected the input.
    Core(CoreError),
    /// An integer parameter outside the range the contract allows (or outside i64).
    IntRange {
        /// Exception class for this parameter.
        class: Class,
        /// Parameter name.
        param: &'static str,
        /// `repr()` of the value given.
        value: String,
        /// The valid range, as the message should state it.
        range: &'static str,
    },
    /// A parameter of the wrong Python type.
    ParamType {
        /// Parameter name.
        param: &'static str,
        /// What the parameter accepts.
        expected: &'static str,
        /// The Python type name given.
        got: String,
    },
    /// A concurrency digest that is not 32 bytes.
    DigestLength(usize),
    /// A JSON-able value (canonical_json / unique_key args) that cannot be encoded.
    Json {
        /// The parameter holding the value (`args`, `obj`).
        root: &'static str,
        /// Location inside the value, innermost first, e.g. `["[2]", "[\"a\"]"]`.
        path: Vec<String>,
        /// What went wrong.
        kind: JsonProblem,
    },
}

/// How many path segments an error message shows.
const MAX_PATH_SEGMENTS: usize = 8;

/// Why a value cannot be encoded as Awa canonical JSON.
#[derive(Debug)]
pub(crate) enum JsonProblem {
    /// A Python type that has no JSON mapping.
    Type(String),
    /// A dict key that is not a str.
    KeyType(String),
    /// An int outside i64 ∪ u64.
    IntRange(String),
    /// A str that is not valid Unicode (lone surrogate).
    BadString,
    /// Nesting deeper than the core's limit.
    TooDeep(usize),
}

impl BindingError {
    /// Prepend one path segment (used while unwinding out of a nested value).
    pub(crate) fn at(mut self, segment: impl FnOnce() -> String) -> Self {
        if let Self::Json { path, .. } = &mut self {
            path.push(segment());
        }
        self
    }

    fn class_and_message(&self) -> (Class, String) {
        match self {
            Self::Core(e) => (core_class(e), e.to_string()),
            Self::IntRange {
                class,
                param,
                value,
                range,
            } => (
                *class,
                format!("{param}={value} is out of range: pass an integer in {range}"),
            ),
            Self::ParamType {
                param,
                expected,
                got,
            } => (
                Class::InvalidType,
                format!("{param} must be {expected}, not {got}"),
            ),
            Self::DigestLength(n) => (
                Class::InvalidKey,
                format!(
                    "concurrency digest must be 32 bytes, got {n}: pass the output of \
                     concurrency_digest(key), not the key itself"
                ),
            ),
            Self::Json { root, path, kind } => {
                let mut at = String::from(*root);
                // A too-deep value has a path as long as the limit: show its start only.
                for seg in path.iter().rev().take(MAX_PATH_SEGMENTS) {
                    at.push_str(seg);
                }
                if path.len() > MAX_PATH_SEGMENTS {
                    at.push_str("...");
                }
                match kind {
                    JsonProblem::Type(t) => (
                        Class::InvalidArgsType,
                        format!(
                            "{at}: {t} is not a JSON type; use dict (str keys), list, str, int, \
                             float, bool or None (convert tuples to lists, decode bytes)"
                        ),
                    ),
                    JsonProblem::KeyType(t) => (
                        Class::InvalidArgsType,
                        format!("{at}: dict key of type {t}; JSON object keys must be str, convert the key with str()"),
                    ),
                    JsonProblem::IntRange(v) => (
                        Class::IntegerOutOfRange,
                        format!(
                            "{at}: integer {v} is outside i64 ∪ u64 \
                             (-9223372036854775808..=18446744073709551615); \
                             encode it as a string"
                        ),
                    ),
                    JsonProblem::BadString => (
                        Class::InvalidArgs,
                        format!("{at}: str contains a lone surrogate; JSON strings must be valid Unicode"),
                    ),
                    JsonProblem::TooDeep(max) => (
                        Class::InvalidArgs,
                        format!("{at}: args nested deeper than {max} levels; flatten the args object"),
                    ),
                }
            }
        }
    }
}

/// The Python class for a core error. The core enum is `#[non_exhaustive]`: a variant added
/// later maps to the base class until it is listed here.
fn core_class(e: &CoreError) -> Class {
    match e {
        CoreError::InvalidWidth(_) => Class::InvalidWidth,
        CoreError::InvalidPartitions(_) => Class::InvalidPartitions,
        CoreError::KeyTooLong { .. } => Class::InvalidKey,
        CoreError::TooDeep { .. } => Class::InvalidArgs,
        CoreError::InvalidUniqueStates(_) => Class::InvalidUniqueStates,
        CoreError::InvalidShard(_) => Class::InvalidShard,
        _ => Class::Error,
    }
}

impl From<CoreError> for BindingError {
    fn from(e: CoreError) -> Self {
        Self::Core(e)
    }
}

/// Cache of `awa_conformance._errors`' namespace, filled on the first error raised.
static ERRORS: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

fn class_object<'py>(py: Python<'py>, class: Class) -> PyResult<Bound<'py, PyType>> {
    let ns = ERRORS.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let module = py.import(ERRORS_MODULE)?;
        Ok(module.dict().unbind())
    })?;
    let ty = ns.bind(py).get_item(class.name())?.ok_or_else(|| {
        PyRuntimeError::new_err(format!(
            "{ERRORS_MODULE} has no class {}: reinstall awa-conformance",
            class.name()
        ))
    })?;
    Ok(ty.cast_into::<PyType>()?)
}

impl From<BindingError> for PyErr {
    fn from(e: BindingError) -> Self {
        let (class, message) = e.class_and_message();
        Python::attach(|py| match class_object(py, class) {
            Ok(ty) => PyErr::from_type(ty, message),
            // The package is broken (e.g. _errors.py missing): surface that import error.
            Err(import_err) => import_err,
        })
    }
}
