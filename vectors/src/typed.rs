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

/// A chain of at least this many single-element wrappers is written as one `nested` typed
/// value (ADR 0020), so that a value 128 deep is not 256 levels of file JSON, beyond the depth
/// limit of common parsers (serde_json: 127). v1's deepest value (32) stays in the plain form.
pub(crate) const NEST_MIN: usize = 64;
/// The largest `depth` a `nested` typed value may have.
pub(crate) const NEST_MAX: usize = 4096;

/// The chain of single-element wrappers of the same kind starting at `v`: (depth, key for
/// objects, the value inside).
fn chain(v: &Value) -> (usize, Option<&str>, &Value) {
    let mut depth = 0;
    let mut cur = v;
    let key = match v {
        Value::Object(m) if m.len() == 1 => m.first().map(|(k, _)| k.as_str()),
        _ => None,
    };
    loop {
        match (cur, key) {
            (Value::Array(items), None) if items.len() == 1 => {
                cur = items.first().unwrap_or(cur);
            }
            (Value::Object(m), Some(k))
                if m.len() == 1 && m.first().is_some_and(|(x, _)| x == k) =>
            {
                cur = m.first().map_or(cur, |(_, x)| x);
            }
            _ => return (depth, key, cur),
        }
        depth += 1;
    }
}

/// Encode a core value as typed JSON.
#[must_use]
pub(crate) fn to_typed(v: &Value) -> Json {
    let tv = |t: &str, value: Json| Json::obj([("type", Json::str(t)), ("value", value)]);
    let (depth, key, inner) = chain(v);
    if depth >= NEST_MIN {
        let mut m = vec![
            ("type".to_owned(), Json::str("nested")),
            (
                "container".to_owned(),
                Json::str(if key.is_some() { "object" } else { "array" }),
            ),
        ];
        if let Some(k) = key {
            m.push(("key".to_owned(), Json::str(k)));
        }
        m.push((
            "depth".to_owned(),
            Json::Int(i64::try_from(depth).unwrap_or(i64::MAX)),
        ));
        m.push(("value".to_owned(), to_typed(inner)));
        return Json::Obj(m);
    }
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
        "nested" => &["type", "container", "key", "depth", "value"],
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
        "nested" => {
            let depth = obj
                .get("depth")
                .and_then(serde_json::Value::as_u64)
                .and_then(|d| usize::try_from(d).ok())
                .filter(|d| (1..=NEST_MAX).contains(d))
                .ok_or_else(|| err(&format!("{path}.depth"), format!("must be an integer in 1..={NEST_MAX}")))?;
            let key = obj.get("key");
            let key = match obj.get("container").and_then(serde_json::Value::as_str) {
                Some("array") if key.is_none() => None,
                Some("object") => Some(
                    key.and_then(serde_json::Value::as_str)
                        .ok_or_else(|| err(path, "an object nest needs a string member \"key\""))?,
                ),
                _ => {
                    return Err(err(
                        &format!("{path}.container"),
                        "must be \"array\" (without \"key\") or \"object\" (with \"key\")",
                    ))
                }
            };
            let mut v = from_typed(need(value)?, &vpath)?;
            for _ in 0..depth {
                v = match key {
                    None => Value::Array(vec![v]),
                    Some(k) => Value::Object(vec![(k.to_owned(), v)]),
                };
            }
            Ok(v)
        }
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
        other => Err(err(path, format!("unknown type {other:?}: use null, bool, int, float, string, array, object or nested"))),
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
    fn long_wrapper_chains_use_the_nested_form_and_round_trip() {
        let wrap = |n: usize, obj: bool| {
            let mut v = Value::Int(7);
            for _ in 0..n {
                v = if obj {
                    Value::Object(vec![("k".into(), v)])
                } else {
                    Value::Array(vec![v])
                };
            }
            v
        };
        for (n, obj) in [
            (63, false),
            (64, false),
            (129, false),
            (64, true),
            (200, true),
        ] {
            let v = wrap(n, obj);
            let typed = to_typed(&v);
            let text = crate::pretty::render(&typed);
            assert_eq!(text.contains("\"nested\""), n >= NEST_MIN, "{n}");
            assert_eq!(round_trip(&v), v, "{n} {obj}");
        }
        // A chain whose key changes is two chains.
        let mixed = Value::Object(vec![("a".into(), wrap(70, true))]);
        assert_eq!(round_trip(&mixed), mixed);
    }

    #[test]
    fn bad_nested_forms_are_errors() {
        let j = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        let int = r#"{"type":"int","value":"1"}"#;
        for bad in [
            format!(r#"{{"type":"nested","container":"array","depth":0,"value":{int}}}"#),
            format!(r#"{{"type":"nested","container":"array","depth":4097,"value":{int}}}"#),
            format!(r#"{{"type":"nested","container":"array","key":"k","depth":3,"value":{int}}}"#),
            format!(r#"{{"type":"nested","container":"object","depth":3,"value":{int}}}"#),
            format!(r#"{{"type":"nested","container":"set","depth":3,"value":{int}}}"#),
            r#"{"type":"nested","container":"array","depth":3}"#.to_owned(),
        ] {
            assert!(from_typed(&j(&bad), "p").is_err(), "{bad}");
        }
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
