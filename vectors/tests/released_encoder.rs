//! Differential check: every v1 canonical JSON expectation equals serde_json's compact output
//! (released Awa 0.6.x hashes `serde_json::to_vec` with BTreeMap objects and zmij floats).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test: a panic is a test failure, which is the point"
)]

use awa_conformance_core::Value;
use awa_conformance_vectors::{v1, Case};

/// The serde_json value released Awa would hold: later duplicate keys win, NaN/±inf are null.
fn released(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::UInt(u) => serde_json::Value::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(a) => serde_json::Value::Array(a.iter().map(released).collect()),
        Value::Object(m) => {
            let mut map = serde_json::Map::new();
            for (k, x) in m {
                map.insert(k.clone(), released(x));
            }
            serde_json::Value::Object(map)
        }
    }
}

#[test]
fn canonical_bytes_equal_serde_json_to_vec() {
    let set = v1().unwrap();
    let mut n = 0;
    for (_, v) in set.iter() {
        let (value, canonical) = match &v.case {
            Case::CanonicalJson(c) => (&c.value, &c.canonical),
            Case::UniqueKey(c) => match (&c.args, &c.canonical_args) {
                (Some(a), Some(b)) => (a, b),
                _ => continue,
            },
            _ => continue,
        };
        let theirs = serde_json::to_vec(&released(value)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(canonical),
            String::from_utf8_lossy(&theirs),
            "vector {} differs from serde_json::to_vec",
            v.id
        );
        n += 1;
    }
    assert!(n > 80, "{n}");
}
