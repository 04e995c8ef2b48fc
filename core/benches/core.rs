//! Side-by-side benchmarks of the core against the naive baselines named in docs/benchmarks.md.
//!
//! Each group holds the contender and its baseline on identical input sizes, so
//! `scripts/bench-ratios.py` can print the ratios from one run.
#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented pub fn"
)]

use std::hint::black_box;

use awa_conformance_core::{
    concurrency_digest, concurrency_preimage, ordering_key_hash64, ordering_key_hash64_naive,
    unique_key, Value,
};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use sha2::{Digest, Sha256};

fn digest(c: &mut Criterion) {
    let mut g = c.benchmark_group("concurrency_digest");
    for len in [16usize, 1024] {
        let key: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
        // The baseline hashes a buffer of the same total length as our pre-image, with no
        // framing work: the floor any domain-separated digest could reach.
        let same_len = concurrency_preimage(&key);
        g.throughput(Throughput::Bytes(same_len.len() as u64));
        g.bench_with_input(BenchmarkId::new("core", len), &key, |b, k| {
            b.iter(|| concurrency_digest(black_box(k)))
        });
        g.bench_with_input(BenchmarkId::new("raw_sha256", len), &same_len, |b, p| {
            b.iter(|| Sha256::digest(black_box(p)))
        });
    }
    g.finish();
}

fn ordering_hash(c: &mut Criterion) {
    let mut g = c.benchmark_group("ordering_hash64");
    let key: Vec<u8> = (0..1024).map(|i| (i * 131 + 17) as u8).collect();
    assert_eq!(ordering_key_hash64(&key), ordering_key_hash64_naive(&key));
    g.throughput(Throughput::Bytes(key.len() as u64));
    g.bench_function(BenchmarkId::new("core", 1024), |b| {
        b.iter(|| ordering_key_hash64(black_box(&key)))
    });
    g.bench_function(BenchmarkId::new("naive_loop", 1024), |b| {
        b.iter(|| ordering_key_hash64_naive(black_box(&key)))
    });
    g.finish();
}

/// A realistic ~1 KiB args object: nested, mixed types, keys not in sorted order.
fn args_1k() -> (Value, serde_json::Value) {
    let mut members = Vec::new();
    let mut json = serde_json::Map::new();
    for i in 0..24 {
        let key = format!("field_{:02}", 23 - i);
        let inner = Value::Object(vec![
            ("name".into(), Value::String(format!("customer-{i}"))),
            ("id".into(), Value::Int(1_000_000 + i)),
            ("score".into(), Value::Float(0.5 + i as f64)),
        ]);
        json.insert(
            key.clone(),
            serde_json::json!({"name": format!("customer-{i}"), "id": 1_000_000 + i, "score": 0.5 + i as f64}),
        );
        members.push((key, inner));
    }
    (Value::Object(members), serde_json::Value::Object(json))
}

fn unique(c: &mut Criterion) {
    let (ours, theirs) = args_1k();
    let canon = awa_conformance_core::canonical_json(&ours).unwrap_or_default();
    assert_eq!(canon, serde_json::to_vec(&theirs).unwrap_or_default());
    let mut g = c.benchmark_group("unique_key");
    g.throughput(Throughput::Bytes(canon.len() as u64));
    g.bench_function(BenchmarkId::new("core", canon.len()), |b| {
        b.iter(|| unique_key(black_box("send_email"), None, Some(black_box(&ours)), None))
    });
    g.bench_function(BenchmarkId::new("serde_json_blake3", canon.len()), |b| {
        b.iter(|| {
            let mut h = blake3::Hasher::new();
            h.update(black_box("send_email").as_bytes());
            h.update(b"\0");
            h.update(&serde_json::to_vec(black_box(&theirs)).unwrap_or_default());
            let mut out = [0u8; 16];
            out.copy_from_slice(&h.finalize().as_bytes()[..16]);
            out
        })
    });
    g.finish();
}

criterion_group!(benches, digest, ordering_hash, unique);
criterion_main!(benches);
