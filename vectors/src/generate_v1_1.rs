//! The v1.1 generator: additive vectors at the hash boundaries, more distinct routing keys,
//! rejected inputs, the normative duplicate-key and nesting rules, and the errata that
//! correct v1's frozen text (ADR 0020). Outputs are computed with the core, as for v1.

use awa_conformance_core as core;
use awa_conformance_core::Value;

use crate::generate::{build, patterned, rejected, spec, GenerateError, Spec};
use crate::model::{Case, Vector};
use crate::pretty::Json;
use crate::Family;

/// The SHA-256 domain tag's length: a key of `n` bytes gives a pre-image of `23 + n`.
const TAG_LEN: usize = core::CONCURRENCY_DOMAIN_TAG.len();

/// Key lengths around SHA-256's padding boundaries: (key length, why).
const SHA_KEYS: [(usize, &str); 10] = [
    (32, "the last length whose padding fits the first block"),
    (
        33,
        "the first length that needs a second block for the padding",
    ),
    (40, "one byte short of a full block"),
    (41, "exactly one 64-byte block"),
    (42, "one block plus one byte"),
    (96, "the last length whose padding fits the second block"),
    (97, "the first length that needs a third block"),
    (104, "one byte short of two full blocks"),
    (105, "exactly two 64-byte blocks"),
    (106, "two blocks plus one byte"),
];

fn sha_boundary_keys() -> Vec<(Vec<u8>, String, Vec<&'static str>)> {
    SHA_KEYS
        .iter()
        .map(|&(n, why)| {
            (
                patterned(n, 37, 11),
                format!(
                    "{n}-byte patterned key ((i*37+11) mod 256): SHA-256 pre-image of {} bytes, {why}",
                    n + TAG_LEN
                ),
                vec!["edge:sha256-padding"],
            )
        })
        .collect()
}

fn key_specs(make: fn(&[u8]) -> Result<Case, core::Error>) -> Vec<Spec> {
    sha_boundary_keys()
        .into_iter()
        .map(|(k, d, t)| spec(d, &t, make(&k)))
        .collect()
}

/// A printable ASCII string of `n` characters that is not a repetition of one letter.
fn text(n: usize, seed: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| {
            char::from(
                ALPHABET
                    .get((i * 7 + seed) % ALPHABET.len())
                    .copied()
                    .unwrap_or(b'a'),
            )
        })
        .collect()
}

fn nested_arrays(depth: usize) -> Value {
    let mut v = Value::Int(0);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

fn nested_objects(depth: usize) -> Value {
    let mut v = Value::Bool(true);
    for _ in 0..depth {
        v = Value::Object(vec![("a".to_owned(), v)]);
    }
    v
}

fn obj(members: &[(&str, Value)]) -> Value {
    Value::Object(
        members
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}

fn canonical_json_specs() -> Vec<Spec> {
    let cj = |d: &str, tags: &[&str], v: Value| spec(d, tags, Case::canonical_json(v));
    let typed = |v: &Value| Json::obj([("value", crate::typed::to_typed(v))]);
    vec![
        cj(
            "arrays nested 128 deep: the deepest value the contract accepts",
            &["array", "edge:depth"],
            nested_arrays(128),
        ),
        cj(
            "objects nested 128 deep: the deepest value the contract accepts",
            &["edge:depth", "object"],
            nested_objects(128),
        ),
        rejected(
            "arrays nested 129 deep are refused (too_deep)",
            &["array", "edge:depth", "error"],
            Family::CanonicalJson,
            typed(&nested_arrays(129)),
        ),
        rejected(
            "objects nested 129 deep are refused (too_deep)",
            &["edge:depth", "error", "object"],
            Family::CanonicalJson,
            typed(&nested_objects(129)),
        ),
        cj(
            "duplicate keys (normative): the last occurrence's value is kept, written once at its sorted place",
            &["object", "object:duplicate-keys"],
            obj(&[
                ("b", Value::Int(1)),
                ("a", Value::Int(2)),
                ("b", Value::Int(3)),
            ]),
        ),
        cj(
            "duplicate keys at two depths (normative): a container is replaced by a later scalar, a scalar by a later container",
            &["object", "object:duplicate-keys", "object:nested"],
            obj(&[
                ("x", obj(&[("k", Value::Int(1)), ("k", Value::Int(2))])),
                ("y", Value::Null),
                ("x", Value::Int(7)),
                ("y", Value::Array(vec![obj(&[("m", Value::Bool(false)), ("m", Value::Bool(true))])])),
            ]),
        ),
        cj(
            "U+0080..U+00FF text is raw two-byte UTF-8, never Latin-1 bytes or \\u escapes",
            &["string", "string:latin1", "string:raw"],
            Value::String("\u{80}\u{85}\u{9f}\u{a0}\u{a9}\u{c0}\u{df}\u{e9}\u{f7}\u{ff}".to_owned()),
        ),
        cj(
            "keys in U+0080..U+00FF sort after ASCII by their UTF-8 bytes: z < U+0080 < U+00A0 < é < ÿ (inserted reversed)",
            &["object", "object:order", "string:latin1"],
            obj(&[
                ("\u{ff}", Value::Int(1)),
                ("\u{e9}", Value::Int(2)),
                ("\u{a0}", Value::Int(3)),
                ("\u{80}", Value::Int(4)),
                ("z", Value::Int(5)),
            ]),
        ),
    ]
}

/// A `unique_key` case with kind `b3` and args `{"s": <text>}` whose pre-image is exactly
/// `len` bytes: 2 (kind) + 1 (0x00) + 8 (`{"s":""}`) + the string.
fn blake3_case(len: usize, seed: usize) -> Result<Case, core::Error> {
    let s = text(len.saturating_sub(11), seed);
    Case::unique_key("b3", None, Some(obj(&[("s", Value::String(s))])), None)
}

fn unique_key_specs() -> Result<Vec<Spec>, GenerateError> {
    let lengths: [(usize, &str); 13] = [
        (63, "one byte short of a 64-byte block"),
        (64, "exactly one 64-byte block"),
        (65, "one block plus one byte"),
        (1023, "one byte short of a 1024-byte chunk"),
        (1024, "exactly one 1024-byte chunk"),
        (
            1025,
            "one chunk plus one byte: the first input with two chunks (a parent node)",
        ),
        (2047, "one byte short of two chunks"),
        (2048, "exactly two chunks"),
        (
            2049,
            "two chunks plus one byte: three chunks, an unbalanced tree",
        ),
        (3072, "exactly three chunks"),
        (4096, "exactly four chunks: a two-level tree"),
        (4097, "four chunks plus one byte: five chunks"),
        (
            8193,
            "eight chunks plus one byte: nine chunks, a three-level tree",
        ),
    ];
    let mut out = Vec::new();
    for (i, (len, why)) in lengths.iter().enumerate() {
        let case = blake3_case(*len, i);
        if let Ok(Case::UniqueKey(c)) = &case {
            if c.preimage.len() != *len {
                return Err(GenerateError::Hazard(format!(
                    "the BLAKE3 boundary case for {len} bytes has a {}-byte pre-image",
                    c.preimage.len()
                )));
            }
        }
        out.push(spec(
            format!("BLAKE3 pre-image of {len} bytes (kind b3, args {{\"s\": …}}): {why}"),
            &["args", "edge:blake3-chunk"],
            case,
        ));
    }
    let deep_args = obj(&[("d", nested_arrays(127))]);
    out.push(spec(
        "args nested 128 deep (an object holding 127 nested arrays): accepted",
        &["args", "edge:depth"],
        Case::unique_key("k", None, Some(deep_args), None),
    ));
    let too_deep = obj(&[("d", nested_arrays(128))]);
    out.push(rejected(
        "args nested 129 deep are refused (too_deep)",
        &["args", "edge:depth", "error"],
        Family::UniqueKey,
        Json::obj([
            ("kind", Json::str("k")),
            ("queue", Json::Null),
            ("args", crate::typed::to_typed(&too_deep)),
            ("period_bucket", Json::Null),
        ]),
    ));
    Ok(out)
}

/// Distinct routing keys: high bytes, U+0080..U+00FF text, short non-UTF-8 sequences.
fn routing_keys() -> Vec<(Vec<u8>, &'static str)> {
    let mut keys: Vec<(Vec<u8>, &'static str)> = vec![
        (vec![0x81], "byte 0x81"),
        (vec![0x9f], "byte 0x9f"),
        (vec![0xa0], "byte 0xa0 (Latin-1 no-break space)"),
        (vec![0xc0], "byte 0xc0"),
        (vec![0xc3], "byte 0xc3 (a truncated UTF-8 sequence)"),
        (vec![0xe9], "byte 0xe9 (Latin-1 é)"),
        (vec![0xfe], "byte 0xfe"),
        (
            vec![0xc3, 0xa9],
            "UTF-8 é (c3 a9): differs from Latin-1 é (e9)",
        ),
        (
            vec![0xc3, 0xbf],
            "UTF-8 ÿ (c3 bf): differs from Latin-1 ÿ (ff)",
        ),
        (vec![0xc2, 0x80], "UTF-8 U+0080 (c2 80)"),
        (vec![0xc2, 0xa0], "UTF-8 no-break space U+00A0 (c2 a0)"),
        (vec![0xc0, 0x80], "overlong NUL c0 80 (not UTF-8)"),
        (
            vec![0xed, 0xa0, 0x80],
            "an encoded surrogate ed a0 80 (not UTF-8)",
        ),
        (
            vec![0xff, 0xfe],
            "ff fe (a UTF-16 byte-order mark, not UTF-8)",
        ),
        (vec![0x00, 0xff], "00 ff"),
        (vec![0x80, 0x00], "80 00"),
        (
            b"caf\xe9".to_vec(),
            "\"café\" in Latin-1 (63 61 66 e9, not UTF-8)",
        ),
        ("café".as_bytes().to_vec(), "\"café\" in UTF-8"),
        ("naïve".as_bytes().to_vec(), "\"naïve\" in UTF-8"),
        ("Ålesund".as_bytes().to_vec(), "\"Ålesund\" in UTF-8"),
        ("straße".as_bytes().to_vec(), "\"straße\" in UTF-8"),
        ("¿ÿ?".as_bytes().to_vec(), "\"¿ÿ?\" in UTF-8"),
        (b"tenant-43".to_vec(), "text \"tenant-43\""),
        (b"order-8".to_vec(), "text \"order-8\""),
    ];
    keys.push((
        (0x80..=0xff).collect(),
        "every byte 0x80..0xff once, ascending",
    ));
    keys
}

fn routing_specs() -> Vec<Spec> {
    let widths = [3u8, 8, 13, 64, 5, 32, 17, 2];
    let keys = routing_keys();
    let mut out = Vec::new();
    for (i, (k, d)) in keys.iter().enumerate() {
        let w = widths.get(i % widths.len()).copied().unwrap_or(8);
        let w2 = widths.get((i + 3) % widths.len()).copied().unwrap_or(8);
        out.push(spec(
            format!("width {w}, ordering key {d} only"),
            &["keys:distinct", "route:fallback-digest"],
            Case::routing_precedence(w, Some(k), None),
        ));
        out.push(spec(
            format!("width {w2}, concurrency key {d} only"),
            &["keys:distinct", "route:concurrency_key"],
            Case::routing_precedence(w2, None, Some(k)),
        ));
        if let Some((k2, d2)) = keys.get((i + 1) % keys.len()) {
            out.push(spec(
                format!("width {w}, ordering key {d} with concurrency key {d2}"),
                &["keys:distinct", "route:ordering_key"],
                Case::routing_precedence(w, Some(k), Some(k2)),
            ));
        }
    }
    let long = patterned(4097, 7, 3);
    let rp = |w: i64, ok: Option<&[u8]>, ck: Option<&[u8]>| {
        let hex = |k: Option<&[u8]>| Json::opt_str(k.map(crate::hex::encode));
        Json::obj([
            ("width", Json::Int(w)),
            ("ordering_key_hex", hex(ok)),
            ("concurrency_key_hex", hex(ck)),
        ])
    };
    out.push(rejected(
        "width 0 is refused (invalid_width)",
        &["error"],
        Family::RoutingPrecedence,
        rp(0, None, Some(b"tenant-42")),
    ));
    out.push(rejected(
        "width 65 is refused (invalid_width)",
        &["error"],
        Family::RoutingPrecedence,
        rp(65, Some(b"order-7"), None),
    ));
    out.push(rejected(
        "width -1 is refused (invalid_width)",
        &["error"],
        Family::RoutingPrecedence,
        rp(-1, None, None),
    ));
    out.push(rejected(
        "a 4097-byte concurrency key is refused (key_too_long)",
        &["edge:max-key", "error"],
        Family::RoutingPrecedence,
        rp(8, None, Some(&long)),
    ));
    out
}

fn partition_specs() -> Vec<Spec> {
    let keys: [(&[u8], &str); 5] = [
        (&[0x80], "key 0x80"),
        (&[0xe9], "key 0xe9 (Latin-1 é)"),
        ("é".as_bytes(), "key \"é\" in UTF-8"),
        (&[0xc3], "key 0xc3 (not UTF-8)"),
        ("straße".as_bytes(), "key \"straße\""),
    ];
    let counts: [u16; 4] = [5, 255, 256, 32766];
    let mut out = Vec::new();
    for (ki, (k, kd)) in keys.iter().enumerate() {
        for (ci, n) in counts.iter().enumerate() {
            let q = if (ki + ci) % 2 == 0 {
                "orders"
            } else {
                "tenants.eu"
            };
            out.push(spec(
                format!("{kd} over {n} partitions of {q:?}"),
                &["keys:distinct"],
                Case::partition(k, q, *n),
            ));
        }
    }
    let pt = |n: i64| {
        Json::obj([
            ("key_hex", Json::str("61")),
            ("logical_queue", Json::str("orders")),
            ("partitions", Json::Int(n)),
        ])
    };
    for (n, why) in [
        (0, "0 partitions"),
        (32768, "32768 partitions (one past the maximum)"),
        (-1, "-1 partitions"),
    ] {
        out.push(rejected(
            &format!("{why} are refused (invalid_partitions)"),
            &["error"],
            Family::Partition,
            pt(n),
        ));
    }
    out
}

fn move_specs() -> Vec<Spec> {
    let ms = |r: i64, d: i64| {
        Json::obj([
            ("retained_shard", Json::Int(r)),
            ("destination_width", Json::Int(d)),
        ])
    };
    vec![
        rejected(
            "retained shard 64 is refused (invalid_shard: a stored shard is 0..=63)",
            &["error"],
            Family::MoveShard,
            ms(64, 8),
        ),
        rejected(
            "retained shard -1 is refused (invalid_shard)",
            &["error"],
            Family::MoveShard,
            ms(-1, 8),
        ),
        rejected(
            "destination width 0 is refused (invalid_width)",
            &["error"],
            Family::MoveShard,
            ms(3, 0),
        ),
        rejected(
            "destination width 65 is refused (invalid_width)",
            &["error"],
            Family::MoveShard,
            ms(3, 65),
        ),
    ]
}

/// One family's description in a v1.1 file.
pub(crate) fn family_description(family: Family) -> &'static str {
    match family {
        Family::CanonicalJson => "v1.1 additions to v1's canonical_json (same encoding): the nesting boundary (128 accepted, 129 refused), the last-wins duplicate-key rule as normative vectors, and U+0080..U+00FF text.",
        Family::UniqueKey => "v1.1 additions to v1's unique_key (same framing): BLAKE3 pre-images at the 64-byte block and 1024-byte chunk boundaries up to nine chunks, and the nesting boundary of args.",
        Family::ConcurrencyDigest => "v1.1 additions to v1's concurrency_digest (same rule): keys whose pre-images sit on SHA-256's padding and block boundaries (55/56, 63/64/65, 119/120, 127/128/129 bytes).",
        Family::ConcurrencyShard => "v1.1 additions to v1's concurrency_shard (same rule): the SHA-256 padding-boundary keys at every width 1..=64.",
        Family::RoutingPrecedence => "v1.1 additions to v1's routing_precedence (same rule): many distinct keys (bytes 0x80..0xff, U+0080..U+00FF text, short non-UTF-8 keys) and refused widths and keys.",
        Family::Partition => "v1.1 additions to v1's partition (same rule): high-byte and Latin-1 keys, and refused partition counts.",
        Family::MoveShard => "v1.1 additions to v1's move_shard (same rule): refused retained shards and destination widths.",
        Family::OrderingShard | Family::UniqueStates => "v1.1 adds no vectors to this family.",
    }
}

/// Every v1.1 vector, grouped by family in [`Family::ALL`] order (families without additions
/// are left out).
///
/// # Errors
/// A case definition the core rejects (or accepts, for a rejected-input case), or two cases
/// with one ID.
pub(crate) fn v1_1_vectors() -> Result<Vec<(Family, Vec<Vector>)>, GenerateError> {
    let mut out = Vec::new();
    for family in Family::ALL {
        let specs = match family {
            Family::CanonicalJson => canonical_json_specs(),
            Family::UniqueKey => unique_key_specs()?,
            Family::ConcurrencyDigest => key_specs(Case::concurrency_digest),
            Family::ConcurrencyShard => key_specs(Case::concurrency_shard),
            Family::RoutingPrecedence => routing_specs(),
            Family::Partition => partition_specs(),
            Family::MoveShard => move_specs(),
            Family::OrderingShard | Family::UniqueStates => continue,
        };
        out.push((family, build(family, specs)?));
    }
    Ok(out)
}

/// The errata file: corrections of v1's frozen descriptions and tags, and how many.
///
/// # Errors
/// A corrected v1 vector (found by its frozen description) or the v1.1 vector it points to is
/// missing: the generator changed under the errata.
pub(crate) fn errata(
    v1: &[(Family, Vec<Vector>)],
    v11: &[(Family, Vec<Vector>)],
) -> Result<(Json, usize), GenerateError> {
    let find = |sets: &[(Family, Vec<Vector>)], family: Family, description: &str| {
        sets.iter()
            .filter(|(f, _)| *f == family)
            .flat_map(|(_, vs)| vs)
            .find(|v| v.description.starts_with(description))
            .map(|v| v.id.clone())
            .ok_or_else(|| {
                GenerateError::Hazard(format!(
                    "the errata name a {family} vector described {description:?}, which no longer exists"
                ))
            })
    };
    let empty_kind = find(v1, Family::UniqueKey, "empty kind: insert_job rejects it")?;
    let duplicate = find(
        v1,
        Family::CanonicalJson,
        "duplicate keys: the last member wins",
    )?;
    let normative_duplicate = find(v11, Family::CanonicalJson, "duplicate keys (normative)")?;
    let entry = |id: String, description: String, tags: Option<&[&str]>, reason: &str| {
        let mut members = vec![
            ("id".to_owned(), Json::Str(id)),
            ("description".to_owned(), Json::Str(description)),
        ];
        if let Some(t) = tags {
            members.push((
                "tags".to_owned(),
                Json::Arr(t.iter().map(|x| Json::str(*x)).collect()),
            ));
        }
        members.push(("reason".to_owned(), Json::str(reason)));
        Json::Obj(members)
    };
    let entries = vec![
        entry(
            empty_kind,
            "empty kind: the hash is defined (the pre-image is empty); neither the reference insert_job nor released Awa 0.6.9 refuses kind ''".to_owned(),
            None,
            "The v1 description says insert_job rejects an empty kind with 23514. Neither the reference schema nor released Awa 0.6.9's insert_job_compat rejects '': an empty kind is stored like any other.",
        ),
        entry(
            duplicate,
            format!("duplicate keys: the last member wins (a normative rule of the contract; v1.1 adds the normative vector {normative_duplicate})"),
            Some(&["object", "object:duplicate-keys"]),
            "The v1 text calls the last-wins rule serde_json map semantics and tags it a hazard, but docs/contract.md states it normatively. The vector stays informative in v1 (its bytes are frozen); v1.1 adds normative duplicate-key vectors.",
        ),
    ];
    let count = entries.len();
    Ok((
        Json::obj([
            ("format", Json::str("awa-conformance-errata")),
            ("format_version", Json::Int(1)),
            (
                "description",
                Json::str("Corrections of frozen vectors' descriptions and tags; the vectors' bytes and IDs never change (ADR 0020). Applied by the runner and the bindings when they show a vector."),
            ),
            ("errata", Json::Arr(entries)),
        ]),
        count,
    ))
}
