//! The committed releases (v1, v1.1): embedded = on disk = generator output, every check
//! passes, v1's root never moves, and v1.1 reaches the boundaries it promises.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::collections::BTreeSet;

use awa_conformance_vectors::Vector;
use std::path::PathBuf;

use awa_conformance_core as core;
use awa_conformance_vectors::{
    check_integrity, check_vector, diff_files, embedded, render, render_all, v1, Case, Family,
    Status, VectorSet, EMBEDDED,
};

/// The v1 root: a public contract that never changes.
const V1_ROOT: &str = "ae61d3c909c9aa4f9770c386b6ec2a6d5b819a1dd14a35da1edb9359296efecb";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn v1_root_is_frozen_and_v1_1_pins_it() {
    assert_eq!(v1().unwrap().manifest.root_sha256, V1_ROOT);
    let set = embedded().unwrap();
    assert_eq!(set.bases.len(), 1);
    assert_eq!(set.bases[0].root_sha256, V1_ROOT);
    assert_eq!(set.manifest.vectors_version, "1.1");
    assert_eq!(set.manifest.extends.len(), 1);
    assert_eq!(set.manifest.extends[0].root_sha256, V1_ROOT);
    assert_eq!(set.manifest.extends[0].vectors_version, "1");
}

#[test]
fn embedded_set_equals_on_disk_files() {
    for (label, files) in EMBEDDED {
        for (name, text) in files {
            let disk = std::fs::read_to_string(root().join("..").join(label).join(name)).unwrap();
            assert_eq!(
                &disk, text,
                "{label}/{name}: the embedded copy differs from the file on disk (rebuild)"
            );
        }
    }
    // The vectors root and the newest release's directory load the same releases.
    for dir in [root(), root().join("v1.1")] {
        let disk = VectorSet::load_dir(&dir).unwrap();
        assert_eq!(disk.manifest.vectors_version, "1.1", "{}", dir.display());
        assert_eq!(disk.len(), embedded().unwrap().len());
    }
    assert_eq!(
        VectorSet::load_dir(root().join("v1")).unwrap().len(),
        v1().unwrap().len()
    );
    let disk = VectorSet::load_dir(root()).unwrap();
    let emb = embedded().unwrap();
    assert_eq!(disk.len(), emb.len());
    for ((fa, a), (fb, b)) in disk.iter().zip(emb.iter()) {
        // Compared as rendered JSON: NaN inputs are never == themselves.
        assert_eq!(
            (fa, a.id.as_str(), render(&a.to_json())),
            (fb, b.id.as_str(), render(&b.to_json()))
        );
    }
}

#[test]
fn generator_reproduces_committed_files_byte_for_byte() {
    let rendered = render_all().unwrap();
    let names: Vec<&str> = rendered.iter().map(|(r, _)| *r).collect();
    assert_eq!(names, ["v1", "v1.1"]);
    assert_eq!(rendered[0].1.len(), 10);
    assert_eq!(rendered[1].1.len(), 9);
    for (release, files) in &rendered {
        diff_files(files, |n| {
            std::fs::read_to_string(root().join(release).join(n)).ok()
        })
        .unwrap_or_else(|d| panic!("freeze guard: {release}/{d}"));
    }
}

#[test]
fn every_vector_passes_check_vector() {
    let set = embedded().unwrap();
    assert!(set.len() > v1().unwrap().len());
    for (family, v) in set.iter() {
        check_vector(family, v).unwrap_or_else(|m| panic!("{family}::{}: {m}", v.id));
    }
}

#[test]
fn schema_manifest_and_ids_pass() {
    check_integrity(&v1().unwrap()).unwrap();
    check_integrity(&embedded().unwrap()).unwrap();
}

#[test]
fn ids_are_glob_safe_and_unique() {
    let set = embedded().unwrap();
    let mut seen = BTreeSet::new();
    for (family, v) in set.iter() {
        assert!(v.id.starts_with(&format!("{}-", family.prefix())));
        assert!(
            v.id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{}",
            v.id
        );
        assert!(seen.insert(v.id.clone()), "duplicate {}", v.id);
        let mut sorted = v.tags.clone();
        sorted.sort();
        assert_eq!(sorted, v.tags, "{}: tags must be sorted", v.id);
    }
    for f in &set.files {
        assert!(f.retired.is_empty());
        assert_eq!(f.contract_version, 1);
    }
}

#[test]
fn coverage_matches_the_brief() {
    let set = v1().unwrap();
    let count = |f: Family| set.file(f).unwrap().vectors.len();
    assert_eq!(count(Family::UniqueStates), 256);
    assert_eq!(count(Family::MoveShard), 640);
    // Every (retained, destination) pair appears once.
    let moves: BTreeSet<(u8, u8)> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::MoveShard(c) => Some((c.retained_shard, c.destination_width)),
            _ => None,
        })
        .collect();
    assert_eq!(moves.len(), 640);
    assert!(moves.contains(&(63, 64)) && moves.contains(&(0, 1)));

    // Key families carry the edge keys, including the 4096-byte maximum.
    let keys: BTreeSet<Vec<u8>> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::OrderingShard(c) => Some(c.key.clone()),
            _ => None,
        })
        .collect();
    for k in [
        &b""[..],
        b"\x00",
        b"\x80",
        b"\xff",
        b"\x7f",
        "é".as_bytes(),
        "日本".as_bytes(),
        "🦀".as_bytes(),
    ] {
        assert!(keys.contains(k), "missing key {k:?}");
    }
    assert!(keys.iter().any(|k| k.len() == 4096) && keys.iter().any(|k| k.len() == 1024));

    // 0x00/0x80 and 0x7f/0xff collide at power-of-two widths: the tagged vectors show it.
    let shards = |key: &[u8]| {
        set.iter()
            .find_map(|(_, v)| match &v.case {
                Case::OrderingShard(c) if c.key == key => Some(c.shards.clone()),
                _ => None,
            })
            .unwrap()
    };
    for (a, b) in [(0x00u8, 0x80u8), (0x7f, 0xff)] {
        let (sa, sb) = (shards(&[a]), shards(&[b]));
        for w in [2usize, 4, 8, 16, 32, 64] {
            assert_eq!(sa[w - 1], sb[w - 1], "{a:#x}/{b:#x} at width {w}");
        }
        assert_ne!(sa, sb);
    }

    // Routing covers present/absent/empty on both keys at every listed width.
    let mut combos = BTreeSet::new();
    for (_, v) in set.iter() {
        if let Case::RoutingPrecedence(c) = &v.case {
            let state = |k: &Option<Vec<u8>>| match k {
                None => 0,
                Some(k) if k.is_empty() => 1,
                Some(_) => 2,
            };
            combos.insert((c.width, state(&c.ordering_key), state(&c.concurrency_key)));
        }
    }
    assert_eq!(combos.len(), 8 * 9);

    // Partition counts.
    let counts: BTreeSet<u16> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::Partition(c) => Some(c.partitions),
            _ => None,
        })
        .collect();
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        vec![1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 100, 1000, 32767]
    );

    // The released field-ambiguity hazards: informative, tagged, naming each other, colliding.
    let hazards: Vec<_> = set
        .iter()
        .filter(|(_, v)| v.tags.iter().any(|t| t == "hazard:field-ambiguity"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(hazards.len(), 4);
    for h in &hazards {
        assert_eq!(h.status, Status::Informative);
        let other = hazards
            .iter()
            .find(|o| o.id != h.id && h.description.contains(&o.id))
            .unwrap();
        let (Case::UniqueKey(a), Case::UniqueKey(b)) = (&h.case, &other.case) else {
            panic!()
        };
        assert_eq!(a.unique_key, b.unique_key);
        assert_ne!(
            (&a.queue, &a.args, a.period_bucket),
            (&b.queue, &b.args, b.period_bucket)
        );
    }
}

fn v1_1() -> Vec<(Family, Vector)> {
    embedded()
        .unwrap()
        .files
        .into_iter()
        .filter(|f| f.release == "1.1")
        .flat_map(|f| f.vectors.into_iter().map(move |v| (f.family, v)))
        .collect()
}

#[test]
fn v1_1_reaches_the_hash_boundaries() {
    let set = v1_1();
    // SHA-256: pre-images of 55, 56, 64, 119 and 120 bytes (keys of 32, 33, 41, 96, 97).
    let sha: BTreeSet<usize> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::ConcurrencyDigest(c) => Some(c.preimage.len()),
            _ => None,
        })
        .collect();
    for n in [55, 56, 63, 64, 65, 119, 120, 127, 128, 129] {
        assert!(sha.contains(&n), "no SHA-256 pre-image of {n} bytes");
    }
    let shard_keys: BTreeSet<usize> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::ConcurrencyShard(c) => Some(c.key.len()),
            _ => None,
        })
        .collect();
    assert!([32, 33, 41, 96, 97].iter().all(|n| shard_keys.contains(n)));
    // BLAKE3: pre-images around the 1024-byte chunk (v1's longest was 143 bytes).
    let b3: BTreeSet<usize> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::UniqueKey(c) => Some(c.preimage.len()),
            _ => None,
        })
        .collect();
    for n in [1023, 1024, 1025, 2048, 2049, 4097, 8193] {
        assert!(b3.contains(&n), "no BLAKE3 pre-image of {n} bytes");
    }
    for (_, v) in &set {
        if let Case::UniqueKey(c) = &v.case {
            assert_eq!(
                c.unique_key.as_slice(),
                &blake3::hash(&c.preimage).as_bytes()[..16],
                "{}",
                v.id
            );
        }
    }
}

#[test]
fn v1_1_routing_has_many_distinct_and_non_utf8_keys() {
    let mut keys = BTreeSet::new();
    for (_, v) in v1_1() {
        if let Case::RoutingPrecedence(c) = &v.case {
            keys.extend(c.ordering_key.clone());
            keys.extend(c.concurrency_key.clone());
        }
    }
    assert!(keys.len() >= 20, "{} distinct keys", keys.len());
    let high: BTreeSet<u8> = keys
        .iter()
        .flatten()
        .copied()
        .filter(|b| *b >= 0x80)
        .collect();
    assert_eq!(high.len(), 128, "every byte 0x80..=0xff appears");
    let short_non_utf8 = keys
        .iter()
        .filter(|k| k.len() <= 3 && std::str::from_utf8(k).is_err())
        .count();
    assert!(short_non_utf8 >= 8, "{short_non_utf8}");
    let latin1_text = keys
        .iter()
        .filter_map(|k| std::str::from_utf8(k).ok())
        .filter(|s| s.chars().any(|c| ('\u{80}'..='\u{ff}').contains(&c)))
        .count();
    assert!(latin1_text >= 5, "{latin1_text}");
}

#[test]
fn v1_1_error_vectors_cover_every_code_and_the_nesting_boundary() {
    let set = v1_1();
    let codes: BTreeSet<String> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::Rejected(c) => c.error.clone(),
            _ => None,
        })
        .collect();
    let all: BTreeSet<String> = awa_conformance_vectors::ERROR_CODES
        .iter()
        .map(|c| (*c).to_owned())
        .collect();
    assert_eq!(codes, all);
    for (_, v) in &set {
        if matches!(v.case, Case::Rejected(_)) {
            assert_eq!(v.status, Status::Normative);
            assert!(v.tags.iter().any(|t| t == "error"), "{}", v.id);
        }
    }
    // 128 levels accepted, 129 refused.
    let depth = |v: &core::Value| {
        fn d(v: &core::Value) -> usize {
            match v {
                core::Value::Array(a) => 1 + a.iter().map(d).max().unwrap_or(0),
                core::Value::Object(o) => 1 + o.iter().map(|(_, x)| d(x)).max().unwrap_or(0),
                _ => 0,
            }
        }
        d(v)
    };
    let accepted: BTreeSet<usize> = set
        .iter()
        .filter_map(|(_, v)| match &v.case {
            Case::CanonicalJson(c) => Some(depth(&c.value)),
            Case::UniqueKey(c) => c.args.as_ref().map(depth),
            _ => None,
        })
        .collect();
    assert_eq!(accepted.iter().max(), Some(&core::MAX_DEPTH));
    let duplicate = set
        .iter()
        .filter(|(_, v)| v.tags.iter().any(|t| t == "object:duplicate-keys"))
        .filter(|(_, v)| v.status == Status::Normative)
        .count();
    assert!(duplicate >= 2);
}

#[test]
fn errata_correct_the_frozen_empty_kind_text_without_moving_v1() {
    let set = embedded().unwrap();
    let (_, v) = set.find("uk-426a7aea6bba").unwrap();
    assert!(!v.description.contains("23514"), "{}", v.description);
    assert!(v.erratum.as_deref().unwrap().contains("23514"));
    // The frozen text stays in the v1 bytes.
    let (_, frozen) = v1()
        .unwrap()
        .find("uk-426a7aea6bba")
        .map(|(f, v)| (f, v.clone()))
        .unwrap();
    assert!(frozen.description.contains("23514"));
    assert!(frozen.erratum.is_none());
}
