//! Fuzz the canonical JSON encoder: arbitrary bytes → a core `Value` (small structured
//! decoder) → encode must not panic, must be valid JSON, must re-parse to the same value
//! (NaN/±inf → null, duplicate keys last-wins), and must equal serde_json's own compact
//! output of that value (what released Awa hashes).
#![no_main]

use awa_conformance_core::{canonical_json, Value};
use libfuzzer_sys::fuzz_target;

/// Decoder depth limit: well under the encoder's 128 so every decoded value must encode.
const MAX_DEPTH: usize = 24;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*first)
    }

    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        head
    }

    fn u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        for (slot, x) in b.iter_mut().zip(self.take(8)) {
            *slot = *x;
        }
        u64::from_le_bytes(b)
    }

    fn string(&mut self) -> String {
        let len = usize::from(self.byte().unwrap_or(0) % 24);
        String::from_utf8_lossy(self.take(len)).into_owned()
    }

    fn value(&mut self, depth: usize) -> Value {
        let Some(tag) = self.byte() else {
            return Value::Null;
        };
        let container_ok = depth < MAX_DEPTH;
        match tag % 9 {
            0 => Value::Null,
            1 => Value::Bool(tag & 0x80 != 0),
            2 => Value::Int(self.u64() as i64),
            3 => Value::UInt(self.u64()),
            4 | 5 => Value::Float(f64::from_bits(self.u64())),
            6 => Value::String(self.string()),
            7 if container_ok => {
                let n = usize::from(self.byte().unwrap_or(0) % 8);
                Value::Array((0..n).map(|_| self.value(depth + 1)).collect())
            }
            8 if container_ok => {
                let n = usize::from(self.byte().unwrap_or(0) % 8);
                Value::Object(
                    (0..n)
                        .map(|_| (self.string(), self.value(depth + 1)))
                        .collect(),
                )
            }
            _ => Value::Null,
        }
    }
}

/// What a JSON parser should read back: non-finite floats are null, later keys win.
fn expected(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::UInt(u) => serde_json::Value::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Array(a) => serde_json::Value::Array(a.iter().map(expected).collect()),
        Value::Object(m) => {
            let mut map = serde_json::Map::new();
            for (k, x) in m {
                map.insert(k.clone(), expected(x));
            }
            serde_json::Value::Object(map)
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let value = Input(data).value(0);
    let Ok(bytes) = canonical_json(&value) else {
        panic!("a value nested at most {MAX_DEPTH} deep must encode");
    };
    let parsed: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(p) => p,
        Err(e) => panic!(
            "canonical output is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        ),
    };
    let want = expected(&value);
    assert_eq!(
        parsed,
        want,
        "re-parse differs: {}",
        String::from_utf8_lossy(&bytes)
    );
    // Differential oracle: serde_json (BTreeMap, zmij floats) is what released Awa hashes.
    let theirs = serde_json::to_vec(&want).unwrap_or_default();
    assert_eq!(
        String::from_utf8_lossy(&bytes),
        String::from_utf8_lossy(&theirs),
        "canonical bytes differ from serde_json::to_vec"
    );
});
