//! Tampering and corruption are caught, each with an error naming the file / vector ID / line.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use awa_conformance_vectors::{
    check_errata, check_ids, check_manifest, check_schema, check_vector, diff_files, render_all,
    render_manifest, IntegrityError, LoadError, VectorFile, VectorSet, V1_1_FILES, V1_FILES,
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
    let rendered = render_all().unwrap().swap_remove(0).1;
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

/// v1 (edited by `v1_edit`, manifest re-rendered so v1 is self-consistent) plus v1.1 (edited
/// by `v11_edit`).
fn both(
    v1_edit: impl Fn(&str, &str) -> String,
    v11_edit: impl Fn(&str, &str) -> String,
) -> Result<VectorSet, LoadError> {
    let mut v1: Vec<(&str, String)> = V1_FILES.iter().map(|(n, t)| (*n, v1_edit(n, t))).collect();
    let counted: Vec<(String, String, usize)> = v1
        .iter()
        .filter(|(n, _)| *n != "manifest.json")
        .map(|(n, t)| {
            let f = VectorFile::parse(n, None, t).unwrap();
            ((*n).to_owned(), t.clone(), f.vectors.len())
        })
        .collect();
    if let Some(m) = v1.iter_mut().find(|(n, _)| *n == "manifest.json") {
        m.1 = render_manifest(&counted);
    }
    let v11: Vec<(&str, String)> = V1_1_FILES
        .iter()
        .map(|(n, t)| (*n, v11_edit(n, t)))
        .collect();
    let b1: Vec<(&str, &str)> = v1.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let b11: Vec<(&str, &str)> = v11.iter().map(|(n, t)| (*n, t.as_str())).collect();
    VectorSet::from_releases(&[("vectors/v1", &b1), ("vectors/v1.1", &b11)])
}

fn same(_: &str, t: &str) -> String {
    t.to_owned()
}

#[test]
fn untouched_releases_pass() {
    let set = both(same, same).unwrap();
    check_manifest(&set).unwrap();
    check_errata(&set).unwrap();
    check_ids(&set).unwrap();
    check_schema(&set).unwrap();
}

#[test]
fn a_consistently_edited_v1_breaks_the_pin_in_v1_1() {
    // v1's own manifest is re-rendered, so only the v1.1 pin notices the change.
    let set = both(
        |n, t| {
            if n == "partition.json" {
                t.replacen("Released PartitionedQueue", "Released  PartitionedQueue", 1)
            } else {
                t.to_owned()
            }
        },
        same,
    )
    .unwrap();
    let e = check_manifest(&set).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.starts_with("vectors/v1/manifest.json: root_sha256 is"),
        "{msg}"
    );
    assert!(msg.contains("pins release 1 at ae61d3c9"), "{msg}");
}

#[test]
fn an_erratum_naming_no_vector_fails_and_errata_are_hashed() {
    let set = both(same, |n, t| {
        if n == "errata.json" {
            t.replacen("uk-426a7aea6bba", "uk-000000000000", 1)
        } else {
            t.to_owned()
        }
    })
    .unwrap();
    match check_errata(&set).unwrap_err() {
        IntegrityError::Erratum { file, id } => {
            assert_eq!(
                (file.as_str(), id.as_str()),
                ("vectors/v1.1/errata.json", "uk-000000000000")
            );
        }
        e => panic!("unexpected {e}"),
    }
    let e = check_manifest(&set).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("vectors/v1.1/errata.json: SHA-256 is"),
        "{e}"
    );
    // Not applied to any vector, and the real one is left uncorrected.
    let (_, v) = set.find("uk-426a7aea6bba").unwrap();
    assert!(v.erratum.is_none() && v.description.contains("23514"));
}

#[test]
fn an_erratum_may_not_target_its_own_release() {
    let own = V1_1_FILES
        .iter()
        .find(|(n, _)| *n == "move_shard.json")
        .map(|(_, t)| {
            VectorFile::parse("m", None, t).unwrap().vectors[0]
                .id
                .clone()
        })
        .unwrap();
    let set = both(same, |n, t| {
        if n == "errata.json" {
            t.replacen("uk-426a7aea6bba", &own, 1)
        } else {
            t.to_owned()
        }
    })
    .unwrap();
    assert!(matches!(
        check_errata(&set),
        Err(IntegrityError::Erratum { .. })
    ));
}

#[test]
fn an_edited_error_code_is_caught() {
    // Another valid code: the ID notices (it covers `expected`), and so does recomputation.
    let set = both(same, |n, t| {
        if n == "move_shard.json" {
            t.replacen(
                "\"error\": \"invalid_shard\"",
                "\"error\": \"invalid_width\"",
                1,
            )
        } else {
            t.to_owned()
        }
    })
    .unwrap();
    assert!(matches!(
        check_ids(&set),
        Err(IntegrityError::IdMismatch { .. })
    ));
    let f = set
        .files
        .iter()
        .rev()
        .find(|f| f.family.file_name() == "move_shard.json")
        .unwrap();
    let m = check_vector(f.family, &f.vectors[0]).unwrap_err();
    assert_eq!(
        (m.field.as_str(), m.expected.as_str(), m.actual.as_str()),
        ("expected.error", "\"invalid_width\"", "\"invalid_shard\"")
    );
    // An unknown code does not even load.
    let e = both(same, |n, t| {
        if n == "move_shard.json" {
            t.replacen("\"error\": \"invalid_shard\"", "\"error\": \"nope\"", 1)
        } else {
            t.to_owned()
        }
    })
    .unwrap_err();
    assert!(e.to_string().contains("expected.error"), "{e}");
}

#[test]
fn a_missing_v1_1_file_listed_in_its_manifest_is_a_load_error() {
    let v1: Vec<(&str, &str)> = V1_FILES.to_vec();
    let v11: Vec<(&str, &str)> = V1_1_FILES
        .iter()
        .copied()
        .filter(|(n, _)| *n != "unique_key.json")
        .collect();
    let e = VectorSet::from_releases(&[("vectors/v1", &v1), ("vectors/v1.1", &v11)]).unwrap_err();
    assert!(
        e.to_string().starts_with("vectors/v1.1/unique_key.json"),
        "{e}"
    );
}
