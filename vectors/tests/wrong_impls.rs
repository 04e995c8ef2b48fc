//! The vectors can fail: plausible wrong implementations are caught by `compare`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use awa_conformance_core as core;
use awa_conformance_core::Value;
use awa_conformance_vectors::{
    compare, v1, CanonicalJsonCase, Case, ConcurrencyDigestCase, ConcurrencyShardCase, Family,
    MoveShardCase, OrderingShardCase, PartitionCase, RoutingPrecedenceCase, UniqueKeyCase,
    UniqueStatesCase, Vector,
};
use sha2::{Digest, Sha256};

/// Run `wrong` on every v1 vector of `family`; return (vectors compared, vectors caught).
fn caught(family: Family, wrong: impl Fn(&Vector) -> Option<Case>) -> (usize, usize) {
    caught_in(&v1().unwrap(), family, wrong)
}

/// The same over the vectors of `set` (every release it holds).
fn caught_in(
    set: &awa_conformance_vectors::VectorSet,
    family: Family,
    wrong: impl Fn(&Vector) -> Option<Case>,
) -> (usize, usize) {
    let mut n = 0;
    let mut bad = 0;
    for v in set
        .files
        .iter()
        .filter(|f| f.family == family)
        .flat_map(|f| &f.vectors)
    {
        if let Some(actual) = wrong(v) {
            n += 1;
            if let Err(m) = compare(v, &actual) {
                assert_eq!(m.vector_id, v.id);
                bad += 1;
            }
        }
    }
    (n, bad)
}

fn fnv1a(key: &[u8]) -> u64 {
    key.iter().fold(core::ORDERING_HASH_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(core::ORDERING_HASH_PRIME)
    })
}

fn fnv1(key: &[u8]) -> u64 {
    key.iter().fold(core::ORDERING_HASH_OFFSET, |h, &b| {
        h.wrapping_mul(core::ORDERING_HASH_PRIME) ^ u64::from(b)
    })
}

#[test]
fn fnv1a_and_fnv1_ordering_hashes_are_caught() {
    for hash in [fnv1a as fn(&[u8]) -> u64, fnv1] {
        let (n, bad) = caught(Family::OrderingShard, |v| {
            let Case::OrderingShard(c) = &v.case else {
                return None;
            };
            // The empty key and 0x00 hash alike under every variant: nothing to catch there.
            let h = hash(&c.key);
            if h == c.hash64 {
                return None;
            }
            Some(Case::OrderingShard(OrderingShardCase {
                key: c.key.clone(),
                hash64: h,
                shards: (1..=64u64).map(|w| (h % w) as u8).collect(),
            }))
        });
        assert!(n >= 18, "{n}");
        assert_eq!(
            bad, n,
            "every key the variant hashes differently must be caught"
        );
    }
}

#[test]
fn shards_from_a_wrong_hash_are_caught_even_without_intermediates() {
    // A producer that only reports shards (intermediate copied from the vector) is still caught.
    let (n, bad) = caught(Family::OrderingShard, |v| {
        let Case::OrderingShard(c) = &v.case else {
            return None;
        };
        let h = fnv1a(&c.key);
        (h != c.hash64).then(|| {
            Case::OrderingShard(OrderingShardCase {
                key: c.key.clone(),
                hash64: c.hash64,
                shards: (1..=64u64).map(|w| (h % w) as u8).collect(),
            })
        })
    });
    assert_eq!(bad, n);
}

#[test]
fn wrong_domain_tags_are_caught() {
    let tags: [&[u8]; 3] = [b"awa:concurrency_key:v1", b"awa:concurrency_key:v2\0", b""];
    for tag in tags {
        let (n, bad) = caught(Family::ConcurrencyDigest, |v| {
            let Case::ConcurrencyDigest(c) = &v.case else {
                return None;
            };
            let mut pre = tag.to_vec();
            pre.extend_from_slice(&c.key);
            Some(Case::ConcurrencyDigest(ConcurrencyDigestCase {
                key: c.key.clone(),
                preimage: pre.clone(),
                digest: Sha256::digest(&pre).into(),
            }))
        });
        assert_eq!((n, bad), (20, 20), "tag {tag:?}");
    }
}

#[test]
fn little_endian_first8_is_caught() {
    let (n, bad) = caught(Family::ConcurrencyShard, |v| {
        let Case::ConcurrencyShard(c) = &v.case else {
            return None;
        };
        let first = u64::from_le_bytes(c.digest[..8].try_into().unwrap());
        Some(Case::ConcurrencyShard(ConcurrencyShardCase {
            key: c.key.clone(),
            digest: c.digest,
            first8_u64: c.first8_u64, // pretend the debug layer is right
            shards: (1..=64u64).map(|w| (first % w) as u8).collect(),
        }))
    });
    assert_eq!(bad, n);
}

/// Canonical JSON without sorting: members written in insertion order.
fn insertion_order_json(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(core::canonical_json(&Value::String(k.clone())).unwrap());
                out.push(b':');
                insertion_order_json(x, out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                insertion_order_json(x, out);
            }
            out.push(b']');
        }
        other => out.extend(core::canonical_json(other).unwrap()),
    }
}

/// Sorting by UTF-16 code units (JavaScript's default `sort()`).
fn utf16_sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut m: Vec<(String, Value)> = m
                .iter()
                .map(|(k, x)| (k.clone(), utf16_sorted(x)))
                .collect();
            m.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            m.dedup_by(|later, earlier| later.0 == earlier.0);
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(utf16_sorted).collect()),
        x => x.clone(),
    }
}

fn wrong_cj(v: &Vector, enc: impl Fn(&Value) -> Vec<u8>) -> Option<Case> {
    let Case::CanonicalJson(c) = &v.case else {
        return None;
    };
    let bytes = enc(&c.value);
    Some(Case::CanonicalJson(CanonicalJsonCase {
        value: c.value.clone(),
        canonical_text: String::from_utf8_lossy(&bytes).into_owned(),
        canonical: bytes,
    }))
}

#[test]
fn insertion_order_json_is_caught() {
    let (_, bad) = caught(Family::CanonicalJson, |v| {
        wrong_cj(v, |x| {
            let mut out = Vec::new();
            insertion_order_json(x, &mut out);
            out
        })
    });
    assert!(
        bad >= 4,
        "only {bad} canonical_json vectors caught insertion order"
    );
    // The unique_key args canaries catch it too.
    let (_, bad) = caught(Family::UniqueKey, |v| {
        let Case::UniqueKey(c) = &v.case else {
            return None;
        };
        let args = c.args.as_ref().map(|a| {
            let mut out = Vec::new();
            insertion_order_json(a, &mut out);
            out
        });
        let mut pre = c.kind.as_bytes().to_vec();
        if let Some(q) = &c.queue {
            pre.push(0);
            pre.extend_from_slice(q.as_bytes());
        }
        if let Some(a) = &args {
            pre.push(0);
            pre.extend_from_slice(a);
        }
        if let Some(p) = c.period_bucket {
            pre.push(0);
            pre.extend_from_slice(&p.to_le_bytes());
        }
        let mut key = [0u8; 16];
        key.copy_from_slice(&blake3_16(&pre));
        Some(Case::UniqueKey(UniqueKeyCase {
            canonical_args: args,
            preimage: pre,
            unique_key: key,
            ..c.clone()
        }))
    });
    assert!(bad >= 3);
}

fn blake3_16(pre: &[u8]) -> [u8; 16] {
    blake3::hash(pre).as_bytes()[..16].try_into().unwrap()
}

#[test]
fn utf16_key_order_is_caught() {
    let (_, bad) = caught(Family::CanonicalJson, |v| {
        wrong_cj(v, |x| core::canonical_json(&utf16_sorted(x)).unwrap())
    });
    assert!(bad >= 1, "the astral-key vector must catch UTF-16 ordering");
}

#[test]
fn ascii_escaping_is_caught() {
    // Python json.dumps default: ensure_ascii escapes every non-ASCII character.
    let (_, bad) = caught(Family::CanonicalJson, |v| {
        wrong_cj(v, |x| {
            let right = core::canonical_json(x).unwrap();
            let text = String::from_utf8(right).unwrap();
            text.chars()
                .flat_map(|c| {
                    if c.is_ascii() {
                        c.to_string().into_bytes()
                    } else {
                        c.encode_utf16(&mut [0; 2])
                            .iter()
                            .flat_map(|u| format!("\\u{u:04x}").into_bytes())
                            .collect()
                    }
                })
                .collect()
        })
    });
    assert!(bad >= 5);
}

#[test]
fn big_endian_period_bucket_is_caught() {
    let (n, bad) = caught(Family::UniqueKey, |v| {
        let Case::UniqueKey(c) = &v.case else {
            return None;
        };
        let p = c
            .period_bucket
            .filter(|p| p.to_be_bytes() != p.to_le_bytes())?;
        let mut pre = c.preimage.clone();
        let len = pre.len();
        pre[len - 8..].copy_from_slice(&p.to_be_bytes());
        Some(Case::UniqueKey(UniqueKeyCase {
            preimage: pre,
            ..c.clone()
        }))
    });
    // Byte-palindromic buckets (0, -1, 0x4141…) are skipped above; every other one is caught.
    assert!(n >= 8);
    assert_eq!(bad, n);
}

#[test]
fn unique_states_bit_order_reversed_is_caught() {
    let (n, bad) = caught(Family::UniqueStates, |v| {
        let Case::UniqueStates(c) = &v.case else {
            return None;
        };
        let bits: String = (0..8)
            .rev()
            .map(|i| if c.mask & (1 << i) != 0 { '1' } else { '0' })
            .collect();
        Some(Case::UniqueStates(UniqueStatesCase { bits, ..c.clone() }))
    });
    assert_eq!(n, 256);
    assert_eq!(
        bad,
        256 - 16,
        "only the 16 palindromic masks read the same reversed"
    );
}

#[test]
fn routing_without_digest_fallback_is_caught() {
    let (_, bad) = caught(Family::RoutingPrecedence, |v| {
        let Case::RoutingPrecedence(c) = &v.case else {
            return None;
        };
        let digest = c.concurrency_key.as_deref().map(core::concurrency_digest);
        Some(Case::RoutingPrecedence(RoutingPrecedenceCase {
            concurrency_digest: digest,
            ..c.clone()
        }))
    });
    assert!(bad >= 16, "{bad}");
}

#[test]
fn routing_with_concurrency_key_first_is_caught() {
    let (_, bad) = caught(Family::RoutingPrecedence, |v| {
        let Case::RoutingPrecedence(c) = &v.case else {
            return None;
        };
        let w = core::Width::new(i64::from(c.width)).unwrap();
        // Wrong precedence: a concurrency key hides the ordering key.
        let ok = if c.concurrency_key.is_some() {
            None
        } else {
            c.ordering_key.as_deref()
        };
        let r = core::route(w, ok, c.concurrency_key.as_deref()).unwrap();
        Some(Case::RoutingPrecedence(RoutingPrecedenceCase {
            route_source: r.source,
            enqueue_shard: r.enqueue_shard,
            concurrency_digest: r.concurrency_digest,
            ..c.clone()
        }))
    });
    assert!(bad >= 16, "{bad}");
}

#[test]
fn partition_without_xor_domain_is_caught() {
    let (n, bad) = caught(Family::Partition, |v| {
        let Case::Partition(c) = &v.case else {
            return None;
        };
        let mut x = core::ordering_key_hash64(&c.key);
        x ^= x >> 30;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^= x >> 27;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        Some(Case::Partition(PartitionCase {
            partition_hash64: x,
            ..c.clone()
        }))
    });
    assert_eq!(bad, n);
}

#[test]
fn move_shard_without_mod_is_caught() {
    let (_, bad) = caught(Family::MoveShard, |v| {
        let Case::MoveShard(c) = &v.case else {
            return None;
        };
        Some(Case::MoveShard(MoveShardCase {
            shard: c.retained_shard.min(c.destination_width - 1),
            ..c.clone()
        }))
    });
    assert!(bad > 100);
}

/// A BLAKE3 that only hashes the first 1024-byte chunk: v1 (pre-images up to 143 bytes)
/// cannot see it; the v1.1 chunk-boundary vectors do.
#[test]
fn a_blake3_wrong_past_one_chunk_is_caught_only_by_v1_1() {
    let wrong = |v: &Vector| match &v.case {
        Case::UniqueKey(c) => {
            let mut c = c.clone();
            let first = &c.preimage[..c.preimage.len().min(1024)];
            c.unique_key
                .copy_from_slice(&blake3::hash(first).as_bytes()[..16]);
            Some(Case::UniqueKey(c))
        }
        _ => None,
    };
    let (n1, bad1) = caught(Family::UniqueKey, wrong);
    assert!(n1 > 0);
    assert_eq!(bad1, 0, "v1 has no pre-image past one chunk");
    let (n, bad) = caught_in(
        &awa_conformance_vectors::embedded().unwrap(),
        Family::UniqueKey,
        wrong,
    );
    assert!(n > n1);
    assert!(bad >= 6, "caught {bad}");
}

/// A router that accepts what the contract refuses (clamping widths, truncating long keys)
/// fails every error vector it meets.
#[test]
fn an_implementation_that_accepts_refused_inputs_is_caught() {
    let set = awa_conformance_vectors::embedded().unwrap();
    let mut rejected = 0;
    for (_, v) in set.iter() {
        if let Case::Rejected(c) = &v.case {
            rejected += 1;
            let mut accepted = c.clone();
            accepted.error = None;
            assert!(compare(v, &Case::Rejected(accepted)).is_err(), "{}", v.id);
            let mut other = c.clone();
            other.error = Some("error".to_owned());
            assert!(compare(v, &Case::Rejected(other)).is_err(), "{}", v.id);
        }
    }
    assert!(rejected >= 10, "{rejected}");
}
