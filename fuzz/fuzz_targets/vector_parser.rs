//! Fuzz the vector loader: arbitrary bytes as a family file or manifest must load to `Ok` or
//! a typed `Err`, never panic; whatever loads must also survive checking and content hashing.
#![no_main]

use awa_conformance_vectors::{check_vector, content_id, Manifest, VectorFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = VectorFile::parse("fuzz/unique_key.json", None, text) {
        for v in &file.vectors {
            let _ = check_vector(file.family, v);
        }
        if let Some(raw) = file.json.get("vectors").and_then(|v| v.as_array()) {
            for r in raw {
                let null = serde_json::Value::Null;
                let _ = content_id(
                    file.family,
                    r.get("input").unwrap_or(&null),
                    r.get("expected").unwrap_or(&null),
                );
            }
        }
    }
    let _ = Manifest::parse("fuzz/manifest.json", text);
});
