//! The committed v1 files: embedded = on disk = generator output, and every check passes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use awa_conformance_vectors::{
    check_integrity, check_vector, diff_files, render, render_v1, v1, Case, Family, Status,
    VectorSet, V1_FILES,
};

fn v1_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("v1")
}

#[test]
fn embedded_set_equals_on_disk_files() {
    for (name, text) in V1_FILES {
        let disk = std::fs::read_to_string(v1_dir().join(name)).unwrap();
        assert_eq!(
            disk, text,
            "{name}: the embedded copy differs from vectors/v1 (rebuild)"
        );
    }
    let disk = VectorSet::load_dir(v1_dir()).unwrap();
    let emb = v1().unwrap();
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
    let rendered = render_v1().unwrap();
    assert_eq!(rendered.len(), 10);
    diff_files(&rendered, |n| {
        std::fs::read_to_string(v1_dir().join(n)).ok()
    })
    .unwrap_or_else(|d| panic!("freeze guard: {d}"));
}

#[test]
fn every_vector_passes_check_vector() {
    let set = v1().unwrap();
    assert!(set.len() > 1000);
    for (family, v) in set.iter() {
        check_vector(family, v).unwrap_or_else(|m| panic!("{family}::{}: {m}", v.id));
    }
}

#[test]
fn schema_manifest_and_ids_pass() {
    check_integrity(&v1().unwrap()).unwrap();
}

#[test]
fn ids_are_glob_safe_and_unique() {
    let set = v1().unwrap();
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
