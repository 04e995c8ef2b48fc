//! The v1 generator: every case *input* is defined here; intermediate and expected fields are
//! computed with the core; IDs by the ADR 0001 D8 rule; files by our own pretty-printer.

use awa_conformance_core as core;
use awa_conformance_core::Value;

use crate::check::{content_id_json, root_sha256, sha256_hex};
use crate::load::{ERRATA_FILE, MANIFEST_FILE};
use crate::model::{Case, Status, Vector};
use crate::pretty::{render, Json};
use crate::Family;

/// The generator could not build a vector (a bug in the case definitions, never in data).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GenerateError {
    /// The core rejected a case input.
    #[error("{family} case {description:?}: the core rejected the input: {source}; fix the case definition in vectors/src/generate.rs")]
    Core {
        /// The family.
        family: Family,
        /// The case's description.
        description: String,
        /// The core error.
        source: core::Error,
    },
    /// Two cases have the same content (and so the same ID).
    #[error("{family}: cases {first:?} and {second:?} share ID {id}; remove one from vectors/src/generate.rs")]
    DuplicateId {
        /// The family.
        family: Family,
        /// The shared ID.
        id: String,
        /// The first case's description.
        first: String,
        /// The second case's description.
        second: String,
    },
    /// A documented released hazard no longer reproduces.
    #[error("hazard check failed: {0}; the core no longer matches released Awa")]
    Hazard(String),
    /// A rejected-input case whose input does not decode, or that the core accepts.
    #[error("{family} case {description:?}: {message}; fix the case definition in vectors/src/generate_v1_1.rs")]
    Rejected {
        /// The family.
        family: Family,
        /// The case's description.
        description: String,
        /// What is wrong.
        message: String,
    },
    /// A later release reuses an ID of an earlier one.
    #[error("{family}: case {description:?} has ID {id}, already published in an earlier release; IDs are never reused: change the case")]
    Reused {
        /// The family.
        family: Family,
        /// The reused ID.
        id: String,
        /// The case's description.
        description: String,
    },
}

pub(crate) enum SpecCase {
    Computed(Result<Case, core::Error>),
    Rejected(Result<Case, String>),
}

pub(crate) struct Spec {
    description: String,
    status: Status,
    tags: Vec<String>,
    case: SpecCase,
}

pub(crate) fn spec(
    description: impl Into<String>,
    tags: &[&str],
    case: Result<Case, core::Error>,
) -> Spec {
    Spec {
        description: description.into(),
        status: Status::Normative,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        case: SpecCase::Computed(case),
    }
}

/// A rejected-input case: `input` is run through the core, which must refuse it.
pub(crate) fn rejected(description: &str, tags: &[&str], family: Family, input: Json) -> Spec {
    Spec {
        description: description.to_owned(),
        status: Status::Normative,
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        case: SpecCase::Rejected(Case::rejected(family, input)),
    }
}

fn informative(mut s: Spec) -> Spec {
    s.status = Status::Informative;
    s
}

fn id_of(family: Family, case: &Case) -> Result<String, core::Error> {
    content_id_json(family, &case.input_json(), &case.expected_json())
}

pub(crate) fn build(family: Family, specs: Vec<Spec>) -> Result<Vec<Vector>, GenerateError> {
    let mut out: Vec<Vector> = Vec::with_capacity(specs.len());
    for s in specs {
        let core_err = |source| GenerateError::Core {
            family,
            description: s.description.clone(),
            source,
        };
        let rejected_err = |message: String| GenerateError::Rejected {
            family,
            description: s.description.clone(),
            message,
        };
        let case = match &s.case {
            SpecCase::Computed(c) => c.clone().map_err(core_err)?,
            SpecCase::Rejected(c) => {
                let case = c.clone().map_err(rejected_err)?;
                if matches!(&case, Case::Rejected(r) if r.error.is_none()) {
                    return Err(rejected_err("the core accepts this input".to_owned()));
                }
                case
            }
        };
        let id = id_of(family, &case).map_err(core_err)?;
        if let Some(prev) = out.iter().find(|v| v.id == id) {
            return Err(GenerateError::DuplicateId {
                family,
                id,
                first: prev.description.clone(),
                second: s.description,
            });
        }
        let mut tags = s.tags;
        tags.sort();
        tags.dedup();
        out.push(Vector {
            id,
            description: s.description,
            status: s.status,
            tags,
            case,
            erratum: None,
        });
    }
    Ok(out)
}

// ---- shared inputs ----

pub(crate) fn patterned(len: usize, mul: usize, add: usize) -> Vec<u8> {
    // `% 256` keeps the value in u8 range; the pattern just has to be fixed and non-constant.
    (0..len).map(|i| ((i * mul + add) % 256) as u8).collect()
}

/// Edge and ordinary keys for the key-hashing families: (bytes, description, tags).
fn keys(pow2_tags: bool) -> Vec<(Vec<u8>, String, Vec<&'static str>)> {
    let c00 = if pow2_tags {
        vec!["collision:pow2-00-80", "edge:one-byte"]
    } else {
        vec!["edge:one-byte"]
    };
    let c7f = if pow2_tags {
        vec!["collision:pow2-7f-ff", "edge:one-byte"]
    } else {
        vec!["edge:one-byte"]
    };
    vec![
        (
            vec![],
            "the empty key (a key, distinct from absent)".into(),
            vec!["edge:empty"],
        ),
        (
            b"a".to_vec(),
            "one byte \"a\"".into(),
            vec!["edge:one-byte"],
        ),
        (vec![0x00], "one byte 0x00".into(), c00.clone()),
        (
            vec![0x80],
            "one byte 0x80 (equals 0x00 at power-of-two widths for the ordering hash)".into(),
            c00,
        ),
        (vec![0x7f], "one byte 0x7f".into(), c7f.clone()),
        (
            vec![0xff],
            "one byte 0xff (equals 0x7f at power-of-two widths for the ordering hash)".into(),
            c7f,
        ),
        (
            "é".as_bytes().to_vec(),
            "UTF-8 \"é\" (2 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            "日本".as_bytes().to_vec(),
            "UTF-8 \"日本\" (6 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            "🦀".as_bytes().to_vec(),
            "UTF-8 astral \"🦀\" (4 bytes)".into(),
            vec!["edge:utf8"],
        ),
        (
            b"abcdefg".to_vec(),
            "7 bytes (one short of an 8-byte block)".into(),
            vec!["edge:block"],
        ),
        (
            b"abcdefgh".to_vec(),
            "8 bytes (exactly one 8-byte block)".into(),
            vec!["edge:block"],
        ),
        (
            b"abcdefghi".to_vec(),
            "9 bytes (one block plus one byte)".into(),
            vec!["edge:block"],
        ),
        (
            patterned(1024, 31, 7),
            "1 KiB patterned key ((i*31+7) mod 256)".into(),
            vec!["edge:1kib"],
        ),
        (
            patterned(4096, 7, 3),
            "4096-byte patterned key ((i*7+3) mod 256), the longest key".into(),
            vec!["edge:max-key"],
        ),
        (b"order-1".to_vec(), "text \"order-1\"".into(), vec!["text"]),
        (
            b"customer:42".to_vec(),
            "text \"customer:42\"".into(),
            vec!["text"],
        ),
        (
            b"tenant-42".to_vec(),
            "text \"tenant-42\"".into(),
            vec!["text"],
        ),
        (
            b"user@example.com".to_vec(),
            "text \"user@example.com\"".into(),
            vec!["text"],
        ),
        (
            b"AAAAAAAA".to_vec(),
            "text \"AAAAAAAA\"".into(),
            vec!["text"],
        ),
        (
            b"\x00\x01\x02\x03\xfd\xfe\xff".to_vec(),
            "binary bytes 00 01 02 03 fd fe ff".into(),
            vec!["binary"],
        ),
    ]
}

fn s(x: &str) -> Value {
    Value::String(x.to_owned())
}
fn f(x: f64) -> Value {
    Value::Float(x)
}
fn obj(members: &[(&str, Value)]) -> Value {
    Value::Object(
        members
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
    )
}
fn arr(items: &[Value]) -> Value {
    Value::Array(items.to_vec())
}

// ---- families ----

fn canonical_json_specs() -> Vec<Spec> {
    let cj = |d: &str, tags: &[&str], v: Value| spec(d, tags, Case::canonical_json(v));
    let mut out = vec![
        cj("null", &["scalar"], Value::Null),
        cj("true", &["scalar"], Value::Bool(true)),
        cj("false", &["scalar"], Value::Bool(false)),
        cj("integer 0", &["int"], Value::Int(0)),
        cj("integer -1", &["int"], Value::Int(-1)),
        cj("i64::MIN", &["int", "int:range"], Value::Int(i64::MIN)),
        cj("i64::MAX", &["int", "int:range"], Value::Int(i64::MAX)),
        cj(
            "2^63 (just past i64::MAX, as u64)",
            &["int", "int:range"],
            Value::UInt(1 << 63),
        ),
        cj("u64::MAX", &["int", "int:range"], Value::UInt(u64::MAX)),
    ];
    let floats: &[(f64, &str, &[&str])] = &[
        (0.0, "float 0.0", &["float"]),
        (-0.0, "float -0.0 keeps its sign", &["float"]),
        (
            1.0,
            "integral float 1.0 keeps .0",
            &["float", "float:integral"],
        ),
        (100.0, "integral float 100.0", &["float", "float:integral"]),
        (
            1e15,
            "1e15 is written 1000000000000000.0 (k=16)",
            &["float", "float:integral", "float:threshold"],
        ),
        (
            1e16,
            "1e16 switches to scientific 1e+16 (k=17)",
            &["float", "float:threshold"],
        ),
        (
            9999999999999998.0,
            "9999999999999998.0: 16 digits, k=16",
            &["float", "float:threshold"],
        ),
        (1.5e16, "1.5e16 is 1.5e+16", &["float", "float:threshold"]),
        (
            1234567890123456.7,
            "1234567890123456.7 rounds to its shortest digits, point inside",
            &["float", "float:threshold"],
        ),
        (
            123456789.123,
            "123456789.123: point inside the digits",
            &["float"],
        ),
        (-2.5, "-2.5", &["float"]),
        (0.1, "0.1 (k=0)", &["float", "float:threshold"]),
        (0.0001, "0.0001 (k=-3)", &["float", "float:threshold"]),
        (
            0.00001,
            "0.00001 (k=-4, last plain layout)",
            &["float", "float:threshold"],
        ),
        (0.000015, "0.000015 (k=-4)", &["float", "float:threshold"]),
        (
            1e-6,
            "1e-6 switches to scientific (k=-5)",
            &["float", "float:threshold"],
        ),
        (1.5e-7, "1.5e-7", &["float", "float:threshold"]),
        (
            5e-324,
            "5e-324, the smallest subnormal",
            &["float", "float:extreme"],
        ),
        (
            1.7976931348623157e308,
            "f64::MAX 1.7976931348623157e+308",
            &["float", "float:extreme"],
        ),
        (1e300, "1e300 is 1e+300", &["float", "float:extreme"]),
        (
            // Written as a sum: the literal's exact value needs 17 digits, which clippy flags.
            -914_793_674_309_639.0 - 0.25,
            "exact tie between two shortest forms goes to the even digit: -914793674309639.2",
            &["float", "float:tie"],
        ),
        (
            632_215_237_625_766.0 + 0.25,
            "exact tie between two shortest forms goes to the even digit: 632215237625766.2",
            &["float", "float:tie"],
        ),
        (1.5e21, "1.5e21 is 1.5e+21", &["float"]),
        (
            9007199254740993.0,
            "9007199254740993.0 parses to 2^53 and is written 9007199254740992.0",
            &["float"],
        ),
        (
            f64::NAN,
            "NaN is written null",
            &["float", "float:non-finite"],
        ),
        (
            f64::from_bits(0xfff8_0000_0000_0000),
            "negative NaN is written null",
            &["float", "float:non-finite"],
        ),
        (
            f64::INFINITY,
            "+inf is written null",
            &["float", "float:non-finite"],
        ),
        (
            f64::NEG_INFINITY,
            "-inf is written null",
            &["float", "float:non-finite"],
        ),
    ];
    out.extend(floats.iter().map(|(x, d, t)| cj(d, t, f(*x))));
    let strings: &[(&str, &str, &[&str])] = &[
        ("", "the empty string", &["edge:empty", "string"]),
        ("plain ascii", "plain ASCII", &["string"]),
        ("\"", "quote escapes as \\\"", &["string", "string:escape"]),
        (
            "\\",
            "backslash escapes as \\\\",
            &["string", "string:escape"],
        ),
        (
            "\u{8}",
            "backspace escapes as \\b",
            &["string", "string:escape"],
        ),
        (
            "\u{c}",
            "form feed escapes as \\f",
            &["string", "string:escape"],
        ),
        ("\n", "newline escapes as \\n", &["string", "string:escape"]),
        (
            "\r",
            "carriage return escapes as \\r",
            &["string", "string:escape"],
        ),
        ("\t", "tab escapes as \\t", &["string", "string:escape"]),
        (
            "\u{0}",
            "U+0000 escapes as \\u0000",
            &["string", "string:escape"],
        ),
        (
            "\u{1}",
            "U+0001 escapes as \\u0001",
            &["string", "string:escape"],
        ),
        (
            "\u{1f}",
            "U+001F escapes as lowercase \\u001f",
            &["string", "string:escape"],
        ),
        ("\u{7f}", "DEL 0x7f is raw", &["string", "string:raw"]),
        ("/", "solidus is raw, not \\/", &["string", "string:raw"]),
        ("<>&'", "<>&' are raw", &["string", "string:raw"]),
        (
            "\u{2028}\u{2029}",
            "U+2028 and U+2029 are raw UTF-8",
            &["string", "string:raw"],
        ),
        ("é", "non-ASCII é is raw UTF-8", &["string", "string:raw"]),
        ("日本", "CJK is raw UTF-8", &["string", "string:raw"]),
        (
            "🦀",
            "astral U+1F980 is raw UTF-8, not a surrogate pair",
            &["string", "string:raw"],
        ),
        (
            "a\"b\\c\u{8}\u{c}\n\r\t\u{0}\u{1f}\u{7f}/<>&'é\u{2028}🦀",
            "every escape and raw class in one string",
            &["string", "string:escape", "string:raw"],
        ),
    ];
    out.extend(strings.iter().map(|(x, d, t)| cj(d, t, s(x))));
    out.push(cj("empty array", &["edge:empty", "array"], arr(&[])));
    out.push(cj("empty object", &["edge:empty", "object"], obj(&[])));
    out.push(cj(
        "array of mixed scalars keeps order",
        &["array"],
        arr(&[
            Value::Int(3),
            s("b"),
            Value::Null,
            Value::Bool(false),
            f(1.0),
            Value::Int(-7),
        ]),
    ));
    out.push(cj(
        "nested empty containers",
        &["array", "edge:empty"],
        arr(&[arr(&[]), obj(&[]), arr(&[arr(&[])])]),
    ));
    out.push(cj(
        "keys sort by UTF-8 bytes: \"\" < \"10\" < \"9\" < \"A\" < \"Z\" < \"_\" < \"a\" < \"aa\" < \"é\" (inserted reversed)",
        &["object", "object:order"],
        obj(&[
            ("é", Value::Int(9)), ("aa", Value::Int(8)), ("a", Value::Int(7)), ("_", Value::Int(6)), ("Z", Value::Int(5)),
            ("A", Value::Int(4)), ("9", Value::Int(3)), ("10", Value::Int(2)), ("", Value::Int(1)),
        ]),
    ));
    out.push(cj(
        "astral keys: UTF-8 order U+E000 < U+FFFF < U+1F980 differs from UTF-16 order (inserted in UTF-16 order)",
        &["object", "object:order", "object:utf16-trap"],
        obj(&[("🦀", Value::Int(1)), ("\u{e000}", Value::Int(2)), ("\u{ffff}", Value::Int(3))]),
    ));
    out.push(cj(
        "insertion order differs from sorted order at every depth (4 levels)",
        &["object", "object:order", "object:nested"],
        obj(&[
            (
                "z",
                obj(&[
                    (
                        "y",
                        obj(&[
                            ("x", Value::Int(1)),
                            ("b", obj(&[("d", Value::Int(1)), ("c", Value::Int(2))])),
                        ]),
                    ),
                    (
                        "a",
                        arr(&[obj(&[("n", Value::Int(1)), ("m", Value::Int(2))])]),
                    ),
                ]),
            ),
            ("b", Value::Bool(true)),
            ("a", Value::Null),
        ]),
    ));
    out.push(cj(
        "keys that need escapes sort by their raw bytes",
        &["object", "object:order", "string:escape"],
        obj(&[
            ("\"q", Value::Int(1)),
            ("\n", Value::Int(2)),
            ("\u{0}", Value::Int(3)),
            ("\\", Value::Int(4)),
        ]),
    ));
    out.push(cj(
        "object holding every value type",
        &["object"],
        obj(&[
            ("str", s("x")),
            ("null", Value::Null),
            ("int", Value::Int(-5)),
            ("uint", Value::UInt(u64::MAX)),
            ("float", f(0.5)),
            ("bool", Value::Bool(true)),
            ("arr", arr(&[f(1e16)])),
            ("obj", obj(&[("k", s("v"))])),
        ]),
    ));
    out.push(cj(
        "integer 1 and float 1.0 are written differently",
        &["float:integral", "int"],
        arr(&[Value::Int(1), f(1.0)]),
    ));
    let mut deep = Value::Int(0);
    for _ in 0..32 {
        deep = arr(&[deep]);
    }
    out.push(cj(
        "arrays nested 32 deep (typed form stays within parser depth limits)",
        &["array", "edge:depth"],
        deep,
    ));
    out.push(informative(cj(
        "duplicate keys: the last member wins (serde_json map semantics)",
        &["hazard:duplicate-keys", "object"],
        obj(&[
            ("a", Value::Int(1)),
            ("b", Value::Int(2)),
            ("a", Value::Int(3)),
        ]),
    )));
    out
}

fn unique_key_specs() -> Result<Vec<Spec>, GenerateError> {
    let uk =
        |d: &str, tags: &[&str], k: &str, q: Option<&str>, a: Option<Value>, p: Option<i64>| {
            spec(d, tags, Case::unique_key(k, q, a, p))
        };
    let args = obj(&[("to", s("a@example.com")), ("id", Value::Int(42))]);
    let period = Some(472_222);
    let mut out = Vec::new();
    for mask in 0u8..8 {
        let q = (mask & 1 != 0).then_some("default");
        let a = (mask & 2 != 0).then(|| args.clone());
        let p = if mask & 4 != 0 { period } else { None };
        let parts: Vec<&str> = [
            (q.is_some(), "queue"),
            (a.is_some(), "args"),
            (p.is_some(), "period_bucket"),
        ]
        .iter()
        .filter_map(|(on, n)| on.then_some(*n))
        .collect();
        let d = if parts.is_empty() {
            "kind only".to_owned()
        } else {
            format!("kind + {}", parts.join(" + "))
        };
        out.push(uk(&d, &["fields"], "send_email", q, a, p));
    }
    for (p, d) in [
        (-1, "period_bucket -1 (little-endian ff..ff)"),
        (0, "period_bucket 0"),
        (i64::MIN, "period_bucket i64::MIN"),
        (i64::MAX, "period_bucket i64::MAX"),
    ] {
        out.push(uk(d, &["period"], "report", None, None, Some(p)));
    }
    out.push(uk(
        "period_bucket 1700000000/3600 with queue and args",
        &["period"],
        "report",
        Some("reports"),
        Some(obj(&[("day", s("2023-11-14"))])),
        Some(1_700_000_000 / 3600),
    ));
    out.push(uk(
        "empty args object {}",
        &["args", "edge:empty"],
        "k",
        None,
        Some(obj(&[])),
        None,
    ));
    out.push(uk(
        "args present as JSON null (differs from args absent)",
        &["args"],
        "k",
        None,
        Some(Value::Null),
        None,
    ));
    out.push(uk(
        "args {\"n\":1} (integer)",
        &["args", "float:integral"],
        "k",
        None,
        Some(obj(&[("n", Value::Int(1))])),
        None,
    ));
    out.push(uk(
        "args {\"n\":1.0} (float: a different key than integer 1)",
        &["args", "float:integral"],
        "k",
        None,
        Some(obj(&[("n", f(1.0))])),
        None,
    ));
    out.push(uk(
        "args with float layout canaries",
        &["args", "float", "float:threshold"],
        "k",
        None,
        Some(obj(&[
            ("big", f(1e15)),
            ("bigger", f(1e16)),
            ("small", f(0.00001)),
            ("smaller", f(1e-6)),
            ("neg0", f(-0.0)),
            ("tiny", f(5e-324)),
            ("max", f(1.7976931348623157e308)),
            ("mid", f(1.5e-7)),
        ])),
        None,
    ));
    out.push(uk(
        "args with NaN and infinities (written null: one key for all three)",
        &["args", "float:non-finite"],
        "k",
        None,
        Some(obj(&[
            ("nan", f(f64::NAN)),
            ("inf", f(f64::INFINITY)),
            ("ninf", f(f64::NEG_INFINITY)),
        ])),
        None,
    ));
    out.push(uk(
        "args with i64::MIN, i64::MAX, 2^63 and u64::MAX (the Python SDK turns >i64 into floats)",
        &["args", "hazard:python-int-overflow", "int:range"],
        "k",
        None,
        Some(obj(&[
            ("min", Value::Int(i64::MIN)),
            ("max", Value::Int(i64::MAX)),
            ("p63", Value::UInt(1 << 63)),
            ("umax", Value::UInt(u64::MAX)),
        ])),
        None,
    ));
    out.push(uk(
        "args with escapes and raw non-ASCII (no U+0000: jsonb refuses it)",
        &["args", "string:escape", "string:raw"],
        "k",
        None,
        Some(obj(&[(
            "s",
            s("q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/<>&'é日本\u{2028}\u{2029}🦀"),
        )])),
        None,
    ));
    out.push(uk(
        "args keys in UTF-16 order (astral trap) and insertion order differing at every depth",
        &["args", "object:order", "object:utf16-trap"],
        "k",
        Some("default"),
        Some(obj(&[
            ("🦀", Value::Int(1)),
            (
                "\u{e000}",
                obj(&[
                    (
                        "z",
                        obj(&[
                            ("b", Value::Int(1)),
                            (
                                "a",
                                arr(&[obj(&[("y", Value::Null), ("x", Value::Bool(false))])]),
                            ),
                        ]),
                    ),
                    ("m", s("")),
                ]),
            ),
            ("\u{ffff}", arr(&[])),
            ("", Value::Int(0)),
        ])),
        None,
    ));
    out.push(uk(
        "multibyte kind and queue",
        &["edge:utf8"],
        "送信_メール",
        Some("キュー🦀"),
        Some(obj(&[("é", s("日本"))])),
        Some(7),
    ));
    out.push(uk(
        "empty queue \"\" (differs from queue absent)",
        &["edge:empty"],
        "k",
        Some(""),
        None,
        None,
    ));
    out.push(informative(uk(
        "empty kind: insert_job rejects it (23514) but the hash is still defined",
        &["edge:empty"],
        "",
        None,
        None,
        None,
    )));

    // Released field-ambiguity collisions (docs/released-awa.md R3.2): build both sides, prove they
    // collide, and let each description name the other's ID.
    let a1 = obj(&[("a", Value::Int(1))]);
    let pairs = [
        (
            (
                "K",
                Some("{\"a\":1}"),
                None,
                None,
                "by_queue with queue '{\"a\":1}'",
            ),
            ("K", None, Some(a1), None, "by_args with args {\"a\":1}"),
        ),
        (
            (
                "K",
                Some("AAAAAAAA"),
                None,
                None,
                "by_queue with queue \"AAAAAAAA\"",
            ),
            (
                "K",
                None,
                None,
                Some(0x4141_4141_4141_4141),
                "by_period with period_bucket 0x4141414141414141",
            ),
        ),
    ];
    for ((k1, q1, a1, p1, d1), (k2, q2, a2, p2, d2)) in pairs {
        fn core_err(d: &str) -> impl Fn(core::Error) -> GenerateError + '_ {
            move |source| GenerateError::Core {
                family: Family::UniqueKey,
                description: d.to_owned(),
                source,
            }
        }
        let c1 = Case::unique_key(k1, q1, a1, p1).map_err(core_err(d1))?;
        let c2 = Case::unique_key(k2, q2, a2, p2).map_err(core_err(d2))?;
        if c1.expected_json() != c2.expected_json() {
            return Err(GenerateError::Hazard(format!(
                "{d1} and {d2} no longer collide"
            )));
        }
        let id1 = id_of(Family::UniqueKey, &c1).map_err(core_err(d1))?;
        let id2 = id_of(Family::UniqueKey, &c2).map_err(core_err(d2))?;
        let tags = ["hazard:field-ambiguity"];
        out.push(informative(spec(
            format!("released hazard: kind K {d1} collides with {id2}"),
            &tags,
            Ok(c1),
        )));
        out.push(informative(spec(
            format!("released hazard: kind K {d2} collides with {id1}"),
            &tags,
            Ok(c2),
        )));
    }
    Ok(out)
}

fn key_specs(tags_pow2: bool, make: fn(&[u8]) -> Result<Case, core::Error>) -> Vec<Spec> {
    keys(tags_pow2)
        .into_iter()
        .map(|(k, d, t)| spec(d, &t, make(&k)))
        .collect()
}

fn partition_specs() -> Vec<Spec> {
    let keys: [(&[u8], &str); 6] = [
        (b"", "empty key"),
        (b"a", "key \"a\""),
        (b"order-1", "key \"order-1\""),
        (b"customer:42", "key \"customer:42\""),
        ("日本".as_bytes(), "key \"日本\""),
        (&[0xff], "key 0xff"),
    ];
    let counts: [u16; 13] = [1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 100, 1000, 32767];
    let queues = ["orders", "payments", "email.outbound"];
    let mut out = Vec::new();
    for (ki, (k, kd)) in keys.iter().enumerate() {
        for (ci, n) in counts.iter().enumerate() {
            let q = queues
                .get((ki + ci) % queues.len())
                .copied()
                .unwrap_or("orders");
            let mut tags = vec![];
            if *n == 1 {
                tags.push("edge:single-partition");
            }
            if *n == 32767 {
                tags.push("edge:max-partitions");
            }
            out.push(spec(
                format!("{kd} over {n} partitions of {q:?}"),
                &tags,
                Case::partition(k, q, *n),
            ));
        }
    }
    out
}

fn routing_specs() -> Vec<Spec> {
    let oks: [(Option<&[u8]>, &str); 3] = [
        (None, "no ordering key"),
        (Some(b""), "empty ordering key"),
        (Some(b"order-7"), "ordering key \"order-7\""),
    ];
    let cks: [(Option<&[u8]>, &str); 3] = [
        (None, "no concurrency key"),
        (Some(b""), "empty concurrency key"),
        (Some(b"tenant-42"), "concurrency key \"tenant-42\""),
    ];
    let widths = [1u8, 2, 3, 7, 8, 16, 63, 64];
    let mut out = Vec::new();
    for w in widths {
        for (ok, od) in oks {
            for (ck, cd) in cks {
                let mut tags = vec![match (ok, ck) {
                    (Some(_), None) => "route:fallback-digest",
                    (Some(_), Some(_)) => "route:ordering_key",
                    (None, Some(_)) => "route:concurrency_key",
                    (None, None) => "route:rotor",
                }];
                if ok == Some(b"") || ck == Some(b"") {
                    tags.push("edge:empty");
                }
                out.push(spec(
                    format!("width {w}, {od}, {cd}"),
                    &tags,
                    Case::routing_precedence(w, ok, ck),
                ));
            }
        }
        out.push(spec(
            format!("width {w}, the same bytes \"shared\" as ordering and concurrency key"),
            &["edge:same-key", "route:ordering_key"],
            Case::routing_precedence(w, Some(b"shared"), Some(b"shared")),
        ));
    }
    let max = patterned(4096, 7, 3);
    out.push(spec(
        "width 64, 4096-byte ordering key only",
        &["edge:max-key", "route:fallback-digest"],
        Case::routing_precedence(64, Some(&max), None),
    ));
    out.push(spec(
        "width 64, 4096-byte concurrency key only",
        &["edge:max-key", "route:concurrency_key"],
        Case::routing_precedence(64, None, Some(&max)),
    ));
    out.push(spec(
        "width 7, UTF-8 concurrency key \"日本\"",
        &["edge:utf8", "route:concurrency_key"],
        Case::routing_precedence(7, None, Some("日本".as_bytes())),
    ));
    out
}

fn move_specs() -> Vec<Spec> {
    let dests = [1u8, 2, 3, 7, 8, 16, 31, 32, 63, 64];
    (0u8..64)
        .flat_map(|r| {
            dests.iter().map(move |d| {
                spec(
                    format!("retained shard {r} moved to width {d}"),
                    &[],
                    Case::move_shard(r, *d),
                )
            })
        })
        .collect()
}

fn states_specs() -> Vec<Spec> {
    (0..=255u8)
        .map(|m| {
            let mut tags = vec![];
            if m == core::DEFAULT_UNIQUE_STATES {
                tags.push("default");
            }
            if m == 0 || m == 255 {
                tags.push("edge:extreme");
            }
            spec(format!("mask {m:#04x}"), &tags, Ok(Case::unique_states(m)))
        })
        .collect()
}

fn family_description(family: Family) -> &'static str {
    match family {
        Family::CanonicalJson => "Awa canonical JSON v1: the exact bytes released Awa 0.6.x hashes for unique_key args (serde_json::to_vec with BTreeMap objects and zmij floats). Inputs are typed values so insertion order and float bits survive any parser.",
        Family::UniqueKey => "Released unique_key: BLAKE3(kind [|| 0x00 || queue] [|| 0x00 || canonical args] [|| 0x00 || period_bucket i64 LE])[0..16]. Informative vectors document the released field-ambiguity collisions.",
        Family::OrderingShard => "Released ordering-key shard: h = 0xcbf29ce484222325; h = h*0x100000001b3 + byte (mod 2^64, multiply then add); shards[i] = h mod (i+1) for every width 1..=64.",
        Family::Partition => "Released PartitionedQueue routing: SplitMix64 finaliser over ordering_key_hash64(key) XOR 0x9d4d1b2f53a70c91, mod the partition count; partition 0 is the logical queue, partition n is <logical>__p<n>.",
        Family::ConcurrencyDigest => "Contract v1 D1: SHA-256(\"awa:concurrency_key:v1\" || 0x00 || key). The empty key is a key.",
        Family::ConcurrencyShard => "Contract v1 D2: the first 8 digest bytes as a big-endian u64, mod width; shards[i] at width i+1 for every width 1..=64.",
        Family::RoutingPrecedence => "Contract v1 D3: ordering key, else concurrency key, else rotor (enqueue_shard null: any shard in [0, width) conforms). The stored digest falls back to the ordering key's.",
        Family::MoveShard => "Contract v1 D4: a moved job keeps retained_shard mod destination_width.",
        Family::UniqueStates => "Released unique_states: bit i of the u8 mask is character i from the left of the bit(8) text and state JOB_STATES[i].",
    }
}

/// Every v1 vector, grouped by family in [`Family::ALL`] order.
///
/// # Errors
/// A case definition the core rejects, two cases with one ID, or a lost released hazard.
pub(crate) fn v1_vectors() -> Result<Vec<(Family, Vec<Vector>)>, GenerateError> {
    Family::ALL
        .iter()
        .map(|&family| {
            let specs = match family {
                Family::CanonicalJson => canonical_json_specs(),
                Family::UniqueKey => unique_key_specs()?,
                Family::OrderingShard => key_specs(true, Case::ordering_shard),
                Family::Partition => partition_specs(),
                Family::ConcurrencyDigest => key_specs(false, Case::concurrency_digest),
                Family::ConcurrencyShard => key_specs(false, Case::concurrency_shard),
                Family::RoutingPrecedence => routing_specs(),
                Family::MoveShard => move_specs(),
                Family::UniqueStates => states_specs(),
            };
            Ok((family, build(family, specs)?))
        })
        .collect()
}

/// Render one family file (envelope + vectors) exactly as committed.
fn render_family(family: Family, description: &str, vectors: &[Vector]) -> String {
    render(&Json::obj([
        ("format", Json::str("awa-conformance-vectors")),
        ("format_version", Json::Int(1)),
        ("family", Json::str(family.as_str())),
        (
            "contract_version",
            Json::Int(i64::from(core::CONTRACT_VERSION)),
        ),
        ("description", Json::str(description)),
        ("retired", Json::Arr(vec![])),
        (
            "vectors",
            Json::Arr(vectors.iter().map(Vector::to_json).collect()),
        ),
    ]))
}

fn manifest_files(files: &[(String, String, usize)]) -> (Json, Vec<(String, String)>) {
    let mut sorted: Vec<&(String, String, usize)> = files.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let entries: Vec<(String, String)> = sorted
        .iter()
        .map(|(p, t, _)| (p.clone(), sha256_hex(t.as_bytes())))
        .collect();
    let listing = Json::Arr(
        sorted
            .iter()
            .zip(&entries)
            .map(|((p, _, n), (_, sha))| {
                Json::obj([
                    ("path", Json::str(p)),
                    ("sha256", Json::str(sha)),
                    ("vectors", Json::Int(i64::try_from(*n).unwrap_or(i64::MAX))),
                ])
            })
            .collect(),
    );
    (listing, entries)
}

/// Render a v1 (format 1) `manifest.json` for `(file name, contents, vector count)` entries.
#[must_use]
pub fn render_manifest(files: &[(String, String, usize)]) -> String {
    let (listing, entries) = manifest_files(files);
    render(&Json::obj([
        ("format", Json::str("awa-conformance-manifest")),
        ("format_version", Json::Int(1)),
        ("vectors_version", Json::Int(1)),
        ("files", listing),
        ("root_sha256", Json::Str(root_sha256(&entries))),
    ]))
}

/// One generated release: its directory name (`v1`, `v1.1`) and `(file name, contents)`
/// files, family files in name order, then `errata.json` (when any), then `manifest.json`.
pub type RenderedRelease = (&'static str, Vec<(String, String)>);

fn render_v1(v1: &[(Family, Vec<Vector>)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut counted = Vec::new();
    for (family, vectors) in v1 {
        let text = render_family(*family, family_description(*family), vectors);
        counted.push((family.file_name(), text.clone(), vectors.len()));
        out.push((family.file_name(), text));
    }
    out.push((MANIFEST_FILE.to_owned(), render_manifest(&counted)));
    out
}

fn render_v1_1(
    v1: &[(Family, Vec<Vector>)],
    v1_root: &str,
) -> Result<Vec<(String, String)>, GenerateError> {
    let published: std::collections::HashSet<&str> = v1
        .iter()
        .flat_map(|(_, vs)| vs.iter().map(|v| v.id.as_str()))
        .collect();
    let v11 = crate::generate_v1_1::v1_1_vectors()?;
    let mut out = Vec::new();
    let mut counted = Vec::new();
    for (family, vectors) in &v11 {
        if let Some(v) = vectors.iter().find(|v| published.contains(v.id.as_str())) {
            return Err(GenerateError::Reused {
                family: *family,
                id: v.id.clone(),
                description: v.description.clone(),
            });
        }
        let text = render_family(
            *family,
            crate::generate_v1_1::family_description(*family),
            vectors,
        );
        counted.push((family.file_name(), text.clone(), vectors.len()));
        out.push((family.file_name(), text));
    }
    let (errata, count) = crate::generate_v1_1::errata(v1, &v11)?;
    let errata_text = render(&errata);
    let (listing, mut entries) = manifest_files(&counted);
    let errata_sha = sha256_hex(errata_text.as_bytes());
    entries.push((ERRATA_FILE.to_owned(), errata_sha.clone()));
    let manifest = render(&Json::obj([
        ("format", Json::str("awa-conformance-manifest")),
        ("format_version", Json::Int(2)),
        ("vectors_version", Json::str("1.1")),
        (
            "extends",
            Json::Arr(vec![Json::obj([
                ("vectors_version", Json::str("1")),
                ("path", Json::str("../v1")),
                ("root_sha256", Json::str(v1_root)),
            ])]),
        ),
        ("files", listing),
        (
            "errata",
            Json::obj([
                ("path", Json::str(ERRATA_FILE)),
                ("sha256", Json::Str(errata_sha)),
                (
                    "errata",
                    Json::Int(i64::try_from(count).unwrap_or(i64::MAX)),
                ),
            ]),
        ),
        ("root_sha256", Json::Str(root_sha256(&entries))),
    ]));
    out.push((ERRATA_FILE.to_owned(), errata_text));
    out.push((MANIFEST_FILE.to_owned(), manifest));
    Ok(out)
}

/// Every release as generated, oldest first: `v1` then `v1.1`. What `awa-conformance vectors
/// regenerate` writes and `--check` compares byte for byte.
///
/// # Errors
/// A case definition the core rejects, two cases with one ID (also across releases), or a
/// lost released hazard.
pub fn render_all() -> Result<Vec<RenderedRelease>, GenerateError> {
    let v1 = v1_vectors()?;
    let v1_files = render_v1(&v1);
    let v1_root = v1_files
        .last()
        .and_then(|(_, t)| serde_json::from_str::<serde_json::Value>(t).ok())
        .and_then(|m| {
            m.get("root_sha256")
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    let v11 = render_v1_1(&v1, &v1_root)?;
    Ok(vec![("v1", v1_files), ("v1.1", v11)])
}

/// The first difference between rendered files and files on disk (for `regenerate --check`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: differs from the generator output (expected {expected:?}, found {found:?}); frozen files are never edited: restore from git, or if the generator changed on purpose publish a new vector set")]
pub struct FileDiff {
    /// The file name.
    pub file: String,
    /// 1-based line of the first difference.
    pub line: usize,
    /// The generator's line (empty past the end).
    pub expected: String,
    /// The file's line (empty past the end, or `<missing file>`).
    pub found: String,
}

/// Compare rendered `(name, contents)` files with what `read(name)` returns; the first
/// difference in file order, or `Ok` when every byte matches.
///
/// # Errors
/// The first differing file and line.
pub fn diff_files(
    rendered: &[(String, String)],
    read: impl Fn(&str) -> Option<String>,
) -> Result<(), FileDiff> {
    for (name, want) in rendered {
        let Some(have) = read(name) else {
            return Err(FileDiff {
                file: name.clone(),
                line: 1,
                expected: want.lines().next().unwrap_or_default().to_owned(),
                found: "<missing file>".to_owned(),
            });
        };
        if have == *want {
            continue;
        }
        let (mut w, mut h) = (want.split_inclusive('\n'), have.split_inclusive('\n'));
        let mut line = 1;
        loop {
            match (w.next(), h.next()) {
                (Some(a), Some(b)) if a == b => line += 1,
                (a, b) => {
                    return Err(FileDiff {
                        file: name.clone(),
                        line,
                        expected: a.unwrap_or_default().trim_end_matches('\n').to_owned(),
                        found: b.unwrap_or_default().trim_end_matches('\n').to_owned(),
                    })
                }
            }
        }
    }
    Ok(())
}
