//! Typed JSON values (ADR 0002): insertion order and float identity that survive any parser.

use awa_conformance_core::Value;

use crate::pretty::Json;

/// A typed value that does not decode; `path` is the JSON path below the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypedError {
    pub(crate) path: String,
    pub(crate) message: String,
}

fn err(path: &str, message: impl Into<String>) -> TypedError {
    TypedError {
        path: path.to_owned(),
        message: message.into(),
    }
}

/// The `value` string of a float: `nan`, `inf`, `-inf`, or Rust's shortest round-trip decimal.
#[must_use]
pub(crate) fn float_value_string(f: f64) -> String {
    if f.is_nan() {
        "nan".to_owned()
    } else if f == f64::INFINITY {
        "inf".to_owned()
    } else if f == f64::NEG_INFINITY {
        "-inf".to_owned()
    } else {
        format!("{f:?}")
    }
}

/// Encode a core value as typed JSON.
#[must_use]
pub fn to_typed(v: &Value) -> Json {
    let tv = |t: &str, value: Json| Json::obj([("type", Json::str(t)), ("value", value)]);
    match v {
        Value::Null => Json::obj([("type", Json::str("null"))]),
        Value::Bool(b) => tv("bool", Json::Bool(*b)),
        Value::Int(i) => tv("int", Json::Str(i.to_string())),
        Value::UInt(u) => tv("int", Json::Str(u.to_string())),
        Value::Float(f) => Json::obj([
            ("type", Json::str("float")),
            ("value", Json::Str(float_value_string(*f))),
            ("bits", Json::Str(format!("{:016x}", f.to_bits()))),
        ]),
        Value::String(s) => tv("string", Json::Str(s.clone())),
        Value::Array(items) => tv("array", Json::Arr(items.iter().map(to_typed).collect())),
        Value::Object(members) => tv(
            "object",
            Json::Arr(
                members
                    .iter()
                    .map(|(k, v)| Json::Arr(vec![Json::Str(k.clone()), to_typed(v)]))
                    .collect(),
            ),
        ),
    }
}

/// Decode typed JSON into a core value. Objects keep member order; floats are cross-checked
/// against their bits; ints must be canonical decimals in i64 ∪ u64.
pub(crate) fn from_typed<'a>(j: &'a serde_json::Value, path: &str) -> Result<Value, TypedError> {
    let obj = j.as_object().ok_or_else(|| {
        err(
            path,
            "a typed value must be an object {\"type\": ..., \"value\": ...}",
        )
    })?;
    let ty = obj
        .get("type")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| err(path, "missing string member \"type\""))?;
    let allowed: &[&str] = match ty {
        "null" => &["type"],
        "float" => &["type", "value", "bits"],
        _ => &["type", "value"],
    };
    if let Some(extra) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(err(
            path,
            format!("unexpected member {extra:?} in a {ty} typed value"),
        ));
    }
    let vpath = format!("{path}.value");
    let value = obj.get("value");
    let need = |v: Option<&'a serde_json::Value>| -> Result<&'a serde_json::Value, TypedError> {
        v.ok_or_else(|| {
            err(
                path,
                format!("missing member \"value\" in a {ty} typed value"),
            )
        })
    };
    let need_str = |v: Option<&'a serde_json::Value>| -> Result<&'a str, TypedError> {
        need(v)?
            .as_str()
            .ok_or_else(|| err(&vpath, "must be a string"))
    };
    match ty {
        "null" => Ok(Value::Null),
        "bool" => need(value)?.as_bool().map(Value::Bool).ok_or_else(|| err(&vpath, "must be true or false")),
        "int" => parse_int(need_str(value)?).ok_or_else(|| {
            err(&vpath, "must be a canonical decimal integer in i64 or u64 (no '+', no leading zeros, no \"-0\")")
        }),
        "float" => {
            let text = need_str(value)?;
            let bits_text = obj.get("bits").and_then(serde_json::Value::as_str).ok_or_else(|| err(path, "missing string member \"bits\""))?;
            parse_float(text, bits_text).map_err(|m| err(path, m))
        }
        "string" => Ok(Value::String(need_str(value)?.to_owned())),
        "array" => {
            let items = need(value)?.as_array().ok_or_else(|| err(&vpath, "must be an array of typed values"))?;
            items.iter().enumerate().map(|(i, it)| from_typed(it, &format!("{vpath}[{i}]"))).collect::<Result<_, _>>().map(Value::Array)
        }
        "object" => {
            let members = need(value)?.as_array().ok_or_else(|| err(&vpath, "must be an array of [key, typed value] pairs"))?;
            let mut out = Vec::with_capacity(members.len());
            for (i, m) in members.iter().enumerate() {
                let mpath = format!("{vpath}[{i}]");
                match m.as_array().map(Vec::as_slice) {
                    Some([serde_json::Value::String(k), v]) => out.push((k.clone(), from_typed(v, &format!("{mpath}[1]"))?)),
                    _ => return Err(err(&mpath, "an object member must be a [\"key\", typed value] pair")),
                }
            }
            Ok(Value::Object(out))
        }
        other => Err(err(path, format!("unknown type {other:?}: use null, bool, int, float, string, array or object"))),
    }
}

fn parse_int(s: &str) -> Option<Value> {
    let v = if s.starts_with('-') {
        Value::Int(s.parse().ok()?)
    } else {
        let u: u64 = s.parse().ok()?;
        i64::try_from(u).map_or(Value::UInt(u), Value::Int)
    };
    let canonical = match &v {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        _ => return None,
    };
    (canonical == s).then_some(v)
}

fn parse_float(text: &str, bits_text: &str) -> Result<Value, String> {
    let bits = (bits_text.len() == 16
        && bits_text
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    .then(|| u64::from_str_radix(bits_text, 16).ok())
    .flatten()
    .ok_or_else(|| {
        format!("float bits {bits_text:?} must be 16 lowercase hex digits (IEEE-754 binary64)")
    })?;
    let from_bits = f64::from_bits(bits);
    let decimal = !text.is_empty()
        && text
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+'))
        && text.bytes().any(|b| b.is_ascii_digit());
    let ok = match text {
        "nan" => from_bits.is_nan(),
        "inf" => from_bits == f64::INFINITY,
        "-inf" => from_bits == f64::NEG_INFINITY,
        _ if decimal => text.parse::<f64>().is_ok_and(|f| f.to_bits() == bits),
        _ => {
            return Err(format!(
                "float value {text:?} must be a decimal, \"nan\", \"inf\" or \"-inf\""
            ))
        }
    };
    if ok {
        Ok(Value::Float(from_bits))
    } else {
        Err(format!(
            "float value {text:?} does not match bits {bits_text}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Value) -> Value {
        let text = crate::pretty::render(&to_typed(v));
        from_typed(&serde_json::from_str(&text).unwrap(), "x").unwrap()
    }

    #[test]
    fn values_round_trip_with_order_and_bits() {
        let v = Value::Object(vec![
            ("b".into(), Value::Float(-0.0)),
            (
                "a".into(),
                Value::Array(vec![
                    Value::UInt(u64::MAX),
                    Value::Int(i64::MIN),
                    Value::Null,
                ]),
            ),
            ("a".into(), Value::Bool(true)),
        ]);
        let back = round_trip(&v);
        assert_eq!(back, v);
        let Value::Object(m) = back else { panic!() };
        let Value::Float(f) = m[0].1 else { panic!() };
        assert!(f.is_sign_negative());
    }

    #[test]
    fn bad_inputs_are_errors() {
        let j = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        let e = from_typed(
            &j(r#"{"type":"float","value":"1.5","bits":"3ff0000000000000"}"#),
            "input.args",
        )
        .unwrap_err();
        assert!(e.message.contains("does not match bits"), "{e:?}");
        assert!(from_typed(&j(r#"{"type":"int","value":"007"}"#), "p").is_err());
        assert!(from_typed(&j(r#"{"type":"int","value":"-0"}"#), "p").is_err());
        assert!(from_typed(&j(r#"{"type":"int","value":"18446744073709551616"}"#), "p").is_err());
        assert!(from_typed(
            &j(r#"{"type":"float","value":"NaN","bits":"7ff8000000000000"}"#),
            "p"
        )
        .is_err());
        let e = from_typed(
            &j(r#"{"type":"object","value":[["a",{"type":"bogus"}]]}"#),
            "input.value",
        )
        .unwrap_err();
        assert_eq!(e.path, "input.value.value[0][1]");
    }
}
