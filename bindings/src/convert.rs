//! Python objects → core inputs: JSON values, byte keys and range-checked integers.

use awa_conformance_core::{Value, MAX_DEPTH};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::errors::{BindingError, Class, JsonProblem};
use crate::JsonNull;

/// The Python type name of `obj`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "<unknown type>".to_owned(), |n| n.to_string())
}

/// `repr(obj)`, for messages.
fn repr(obj: &Bound<'_, PyAny>) -> String {
    obj.repr()
        .map_or_else(|_| "<unrepresentable>".to_owned(), |r| r.to_string())
}

/// Convert a Python value to a core JSON [`Value`].
///
/// `bool` is tested before `int` (it is an int subclass); ints must fit i64 ∪ u64 and are
/// never turned into floats; `tuple`, `bytes`, non-str dict keys and other types are type
/// errors. Dict members keep insertion order: the core sorts.
///
/// `root` names the parameter in error messages (`args["a"][2]: ...`).
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, root: &'static str) -> Result<Value, BindingError> {
    to_value_at(obj, 0).map_err(|e| match e {
        BindingError::Json { path, kind, .. } => BindingError::Json { root, path, kind },
        other => other,
    })
}

fn json_err(kind: JsonProblem) -> BindingError {
    BindingError::Json {
        root: "value",
        path: Vec::new(),
        kind,
    }
}

fn to_value_at(obj: &Bound<'_, PyAny>, depth: usize) -> Result<Value, BindingError> {
    if let Ok(s) = obj.cast::<PyString>() {
        return s
            .to_str()
            .map(|s| Value::String(s.to_owned()))
            .map_err(|_| json_err(JsonProblem::BadString));
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::UInt(u));
        }
        return Err(json_err(JsonProblem::IntRange(repr(obj))));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(Value::Float(f.value()));
    }
    if obj.is_none() || obj.is_instance_of::<JsonNull>() {
        return Ok(Value::Null);
    }
    if let Ok(dict) = obj.cast::<PyDict>() {
        // Same rule as the core's encoder: a container at depth MAX_DEPTH is one too many.
        // Checking here also stops self-referencing containers from recursing forever.
        if depth >= MAX_DEPTH {
            return Err(json_err(JsonProblem::TooDeep(MAX_DEPTH)));
        }
        let mut members = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let key = match k.cast::<PyString>() {
                Ok(s) => s
                    .to_str()
                    .map_err(|_| json_err(JsonProblem::BadString))?
                    .to_owned(),
                Err(_) => return Err(json_err(JsonProblem::KeyType(type_name(&k)))),
            };
            let value = to_value_at(&v, depth + 1).map_err(|e| e.at(|| format!("[{key:?}]")))?;
            members.push((key, value));
        }
        return Ok(Value::Object(members));
    }
    if let Ok(list) = obj.cast::<PyList>() {
        if depth >= MAX_DEPTH {
            return Err(json_err(JsonProblem::TooDeep(MAX_DEPTH)));
        }
        let mut items = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            items.push(to_value_at(&item, depth + 1).map_err(|e| e.at(|| format!("[{i}]")))?);
        }
        return Ok(Value::Array(items));
    }
    Err(json_err(JsonProblem::Type(type_name(obj))))
}

/// A `bytes` parameter (keys are raw bytes; text must be encoded by the caller).
pub(crate) fn bytes_param<'a>(
    obj: &'a Bound<'_, PyAny>,
    param: &'static str,
) -> Result<&'a [u8], BindingError> {
    obj.cast::<PyBytes>()
        .map(|b| b.as_bytes())
        .map_err(|_| BindingError::ParamType {
            param,
            expected: "bytes (encode text keys with .encode())",
            got: type_name(obj),
        })
}

/// A `str` parameter.
pub(crate) fn str_param<'a>(
    obj: &'a Bound<'_, PyAny>,
    param: &'static str,
) -> Result<std::borrow::Cow<'a, str>, BindingError> {
    let s = obj
        .cast::<PyString>()
        .map_err(|_| BindingError::ParamType {
            param,
            expected: "str",
            got: type_name(obj),
        })?;
    s.to_cow().map_err(|_| BindingError::ParamType {
        param,
        expected: "a str without lone surrogates",
        got: "str with a lone surrogate".to_owned(),
    })
}

/// An integer parameter that must fit `i64`; `class`/`range` describe the error otherwise.
///
/// `bool` is rejected: `True` as a width is a bug, not `1`.
pub(crate) fn int_param(
    obj: &Bound<'_, PyAny>,
    param: &'static str,
    class: Class,
    range: &'static str,
) -> Result<i64, BindingError> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(BindingError::ParamType {
            param,
            expected: "int",
            got: type_name(obj),
        });
    }
    obj.extract::<i64>().map_err(|_| BindingError::IntRange {
        class,
        param,
        value: repr(obj),
        range,
    })
}
