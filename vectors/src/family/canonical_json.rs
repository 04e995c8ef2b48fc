//! Family `canonical_json`: the Awa canonical JSON v1 bytes of a typed value.

use awa_conformance_core as core;
use awa_conformance_core::Value;
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::hex;
use crate::model::Case;
use crate::pretty::Json;
use crate::typed::{from_typed, to_typed};
use crate::wire::{decode_input, ferr, hex_bytes, serde_part, FResult, FieldError};

/// `canonical_json`: a typed value and its canonical bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalJsonCase {
    /// input `value`.
    pub value: Value,
    /// expected `canonical_hex`.
    pub canonical: Vec<u8>,
    /// expected `canonical_text` (the same bytes as UTF-8).
    pub canonical_text: String,
}

impl Case {
    /// A `canonical_json` case with outputs computed by the core.
    ///
    /// # Errors
    /// The core's error for an input it rejects.
    pub fn canonical_json(value: Value) -> Result<Self, core::Error> {
        let canonical = core::canonical_json(&value)?;
        let canonical_text = String::from_utf8_lossy(&canonical).into_owned();
        Ok(Self::CanonicalJson(CanonicalJsonCase {
            value,
            canonical,
            canonical_text,
        }))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CjIn {
    value: serde_json::Value,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CjEx {
    canonical_hex: String,
    canonical_text: String,
}

fn typed(v: &serde_json::Value, path: &str) -> FResult<Value> {
    from_typed(v, path).map_err(|t| ferr(t.path, t.message))
}

/// The `canonical_json` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::CanonicalJson;
    const NAME: &'static str = "canonical_json";
    const PREFIX: &'static str = "cj";
    const HAS_INTERMEDIATE: bool = false;
    type Case = CanonicalJsonCase;

    fn input_json(c: &CanonicalJsonCase) -> Json {
        Json::obj([("value", to_typed(&c.value))])
    }

    fn expected_json(c: &CanonicalJsonCase) -> Json {
        Json::obj([
            ("canonical_hex", Json::Str(hex::encode(&c.canonical))),
            ("canonical_text", Json::str(&c.canonical_text)),
        ])
    }

    fn recompute(c: &CanonicalJsonCase) -> Result<Case, core::Error> {
        Case::canonical_json(c.value.clone())
    }

    fn parse(
        input: Option<&serde_json::Value>,
        _intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: CjIn = serde_part(input, "input")?;
        let ex: CjEx = serde_part(expected, "expected")?;
        Ok(Case::CanonicalJson(CanonicalJsonCase {
            value: typed(&inp.value, "input.value")?,
            canonical: hex_bytes(&ex.canonical_hex, "expected.canonical_hex")?,
            canonical_text: ex.canonical_text,
        }))
    }

    fn attempt(input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        let i: CjIn = decode_input(input)?;
        let verdict = core::canonical_json(&typed(&i.value, "input.value")?);
        Ok(crate::reject::refusal(verdict))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Awa canonical JSON v1: the exact bytes released Awa 0.6.x hashes for unique_key args (serde_json::to_vec with BTreeMap objects and zmij floats). Inputs are typed values so insertion order and float bits survive any parser.",
            || Ok(cases::v1()),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's canonical_json (same encoding): the nesting boundary (128 accepted, 129 refused), the last-wins duplicate-key rule as normative vectors, and U+0080..U+00FF text.",
            || Ok(cases::v1_1()),
        )),
    };
}

/// The generator's cases, release by release (inputs only: outputs come from the core).
#[cfg(feature = "maintainer")]
mod cases {
    use awa_conformance_core::Value;

    use crate::generate::inputs::{arr, f, nested_arrays, nested_objects, obj, s};
    use crate::generate::{informative, rejected, spec, Spec};
    use crate::model::Case;
    use crate::pretty::Json;
    use crate::Family;

    /// Release v1's cases, in file order (frozen: changing one moves a published byte).
    pub(super) fn v1() -> Vec<Spec> {
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

    /// Release v1.1's cases, in file order (frozen, like v1's).
    pub(super) fn v1_1() -> Vec<Spec> {
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
}
