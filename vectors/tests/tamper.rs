//! Tampering and corruption are caught, each with an error naming the file / vector ID / line.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use awa_conformance_vectors::{
    check_ids, check_manifest, check_schema, check_vector, diff_files, render_v1, IntegrityError,
    LoadError, VectorFile, VectorSet, V1_FILES,
};

/// The v1 texts with `name` replaced by `edit(text)`.
fn edited(name: &str, edit: impl Fn(&str) -> String) -> Vec<(&'static str, String)> {
    V1_FILES
        .iter()
        .map(|(n, t)| (*n, if *n == name { edit(t) } else { (*t).to_owned() }))
        .collect()
}

fn load(texts: &[(&'static str, String)]) -> Result<VectorSet, LoadError> {
    let borrowed: Vec<(&str, &str)> = texts.iter().map(|(n, t)| (*n, t.as_str())).collect();
    VectorSet::from_texts("vectors/v1", &borrowed)
}

/// Flip the first hex digit of the first `"<field>": "<hex>"` occurrence.
fn flip_first(text: &str, field: &str) -> String {
    let needle = format!("\"{field}\": \"");
    let at = text.find(&needle).unwrap() + needle.len();
    let mut bytes = text.as_bytes().to_vec();
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn flipped_expected_digit_fails_check_vector_naming_the_id() {
    for (file, field) in [
        ("unique_key.json", "unique_key_hex"),
        ("concurrency_digest.json", "digest_hex"),
        ("canonical_json.json", "canonical_hex"),
        ("unique_key.json", "preimage_hex"),
    ] {
        let set = load(&edited(file, |t| flip_first(t, field))).unwrap();
        let f = set
            .files
            .iter()
            .find(|f| f.family.file_name() == file)
            .unwrap();
        let v = &f.vectors[0];
        let m = check_vector(f.family, v).unwrap_err();
        assert_eq!(m.vector_id, v.id);
        assert!(m.field.ends_with(field), "{m}");
        assert!(m.to_string().contains(&v.id));
        if m.field.starts_with("expected.") {
            // The content hash covers input + expected, so the ID no longer matches either.
            match check_ids(&set).unwrap_err() {
                IntegrityError::IdMismatch { id, .. } => assert_eq!(id, v.id),
                e => panic!("unexpected {e}"),
            }
        } else {
            // Intermediates are outside the ID (ADR 0001 D8); the manifest still notices.
            check_ids(&set).unwrap();
        }
        assert!(check_manifest(&set).is_err());
    }
}

#[test]
fn edited_shard_is_reported_at_its_width() {
    let set = awa_conformance_vectors::v1().unwrap();
    // A wrong but in-range shard at width 7.
    let f = set
        .files
        .iter()
        .find(|f| f.family.file_name() == "ordering_shard.json")
        .unwrap();
    let mut v = f.vectors[0].clone();
    if let awa_conformance_vectors::Case::OrderingShard(c) = &mut v.case {
        c.shards[6] = (c.shards[6] + 1) % 7;
    }
    let m = check_vector(f.family, &v).unwrap_err();
    assert_eq!(m.field, "expected.shards[6]");
}

#[test]
fn edited_file_fails_the_manifest_check_naming_the_file() {
    let set = load(&edited("partition.json", |t| {
        t.replacen("Released PartitionedQueue", "Released  PartitionedQueue", 1)
    }))
    .unwrap();
    let e = check_manifest(&set).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("vectors/v1/partition.json: SHA-256 is"),
        "{e}"
    );
    // IDs and vectors are untouched, so only the manifest notices.
    check_ids(&set).unwrap();
}

#[test]
fn edited_manifest_root_fails() {
    let set = load(&edited("manifest.json", |t| flip_first(t, "root_sha256"))).unwrap();
    let e = check_manifest(&set).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("vectors/v1/manifest.json: root_sha256"),
        "{e}"
    );
}

#[test]
fn duplicate_id_is_an_error() {
    // Append a copy of the first vector to the same file.
    let set = load(&edited("move_shard.json", |t| {
        let start = t.find("    {\n      \"id\"").unwrap();
        let end = start + t[start..].find("\n    }").unwrap() + "\n    }".len();
        let copy = t[start..end].to_owned();
        t.replacen(&t[start..end], &format!("{copy},\n{copy}"), 1)
    }))
    .unwrap();
    match check_ids(&set).unwrap_err() {
        IntegrityError::DuplicateId { file, .. } => assert_eq!(file, "vectors/v1/move_shard.json"),
        e => panic!("unexpected {e}"),
    }
}

#[test]
fn retired_id_reuse_is_an_error() {
    let first_id = {
        let set = awa_conformance_vectors::v1().unwrap();
        set.file(awa_conformance_vectors::Family::UniqueStates)
            .unwrap()
            .vectors[0]
            .id
            .clone()
    };
    let set = load(&edited("unique_states.json", |t| {
        t.replacen(
            "\"retired\": []",
            &format!("\"retired\": [\"{first_id}\"]"),
            1,
        )
    }))
    .unwrap();
    assert!(matches!(
        check_ids(&set).unwrap_err(),
        IntegrityError::RetiredId { .. }
    ));
}

#[test]
fn malformed_json_names_file_and_line() {
    let e = load(&edited("routing_precedence.json", |t| {
        t.replacen("\"retired\": [],", "\"retired\": [", 1)
    }))
    .unwrap_err();
    match &e {
        LoadError::Syntax { file, line, .. } => {
            assert_eq!(file, "vectors/v1/routing_precedence.json");
            assert!(*line > 1);
        }
        other => panic!("unexpected {other}"),
    }
    assert!(e
        .to_string()
        .starts_with("vectors/v1/routing_precedence.json:"));
}

#[test]
fn float_value_and_bits_disagreement_names_vector_and_path() {
    // 1.0 (bits 3ff0000000000000) relabelled as "1.5".
    let text = V1_FILES
        .iter()
        .find(|(n, _)| *n == "canonical_json.json")
        .unwrap()
        .1;
    let bad = text.replacen(
        "{\"type\": \"float\", \"value\": \"1.0\", \"bits\": \"3ff0000000000000\"}",
        "{\"type\": \"float\", \"value\": \"1.5\", \"bits\": \"3ff0000000000000\"}",
        1,
    );
    assert_ne!(bad, text);
    let e = VectorFile::parse("vectors/v1/canonical_json.json", None, &bad).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("vectors/v1/canonical_json.json: vector cj-"),
        "{msg}"
    );
    assert!(
        msg.contains("input.value: float value \"1.5\" does not match bits 3ff0000000000000"),
        "{msg}"
    );
    assert!(msg.contains("regenerate"), "{msg}");
}

#[test]
fn schema_rejects_what_the_loader_tolerates() {
    // Uppercase tag and an out-of-range shard: the loader decodes both, the schema refuses.
    let set = load(&edited("unique_states.json", |t| {
        t.replacen(
            "\"tags\": [\"edge:extreme\"]",
            "\"tags\": [\"Edge:Extreme\"]",
            1,
        )
    }))
    .unwrap();
    let e = check_schema(&set).unwrap_err();
    assert!(
        matches!(&e, IntegrityError::Schema { file, .. } if file == "vectors/v1/unique_states.json"),
        "{e}"
    );

    let set = load(&edited("concurrency_shard.json", |t| {
        t.replacen("\"shards\": [0, ", "\"shards\": [5, ", 1)
    }))
    .unwrap();
    let e = check_schema(&set).unwrap_err();
    assert!(
        e.to_string().contains("/vectors/0/expected/shards/0"),
        "{e}"
    );
}

#[test]
fn missing_field_and_unknown_field_are_load_errors() {
    let e = load(&edited("move_shard.json", |t| {
        t.replacen(
            "\"status\": \"normative\",",
            "\"status\": \"normative\", \"extra\": 1,",
            1,
        )
    }))
    .unwrap_err();
    assert!(matches!(e, LoadError::Vector { .. }), "{e}");
    let e = load(&edited("move_shard.json", |t| {
        t.replacen("\"format_version\": 1", "\"format_version\": 2", 1)
    }))
    .unwrap_err();
    assert!(e.to_string().contains("format_version"), "{e}");
    let e = VectorFile::parse(
        "x/unique_key.json",
        Some(awa_conformance_vectors::Family::UniqueKey),
        V1_FILES[0].1,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("file holds canonical_json vectors but is named for unique_key"),
        "{e}"
    );
}

#[test]
fn regenerate_check_reports_first_differing_file_and_line() {
    let rendered = render_v1().unwrap();
    let d = diff_files(&rendered, |n| {
        let t = V1_FILES.iter().find(|(f, _)| *f == n).unwrap().1;
        Some(if n == "move_shard.json" {
            t.replacen("\"shard\": 0}", "\"shard\": 9}", 1)
        } else {
            t.to_owned()
        })
    })
    .unwrap_err();
    assert_eq!(d.file, "move_shard.json");
    assert!(d.line > 8);
    assert!(d.found.contains("\"shard\": 9"));
    let d = diff_files(&rendered, |_| None).unwrap_err();
    assert_eq!(
        (d.file.as_str(), d.found.as_str()),
        ("canonical_json.json", "<missing file>")
    );
}
