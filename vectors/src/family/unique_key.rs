//! Family `unique_key`: released `compute_unique_key` (BLAKE3 over kind, queue, canonical args
//! and period bucket).

use awa_conformance_core as core;
use awa_conformance_core::{Value, UNIQUE_KEY_LEN};
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::hex;
use crate::model::Case;
use crate::pretty::Json;
use crate::typed::{from_typed, to_typed};
use crate::wire::{
    decimal, decode_input, ferr, hex_array, hex_bytes, serde_part, FResult, FieldError,
};

/// `unique_key`: released `compute_unique_key` inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueKeyCase {
    /// input `kind`.
    pub kind: String,
    /// input `queue` (`None` = by_queue off).
    pub queue: Option<String>,
    /// input `args` (`None` = by_args off).
    pub args: Option<Value>,
    /// input `period_bucket` (`None` = by_period off).
    pub period_bucket: Option<i64>,
    /// intermediate `canonical_args_hex`.
    pub canonical_args: Option<Vec<u8>>,
    /// intermediate `preimage_hex`.
    pub preimage: Vec<u8>,
    /// expected `unique_key_hex`.
    pub unique_key: [u8; UNIQUE_KEY_LEN],
}

impl Case {
    /// A `unique_key` case with outputs computed by the core.
    ///
    /// # Errors
    /// The core's error for an input it rejects.
    pub fn unique_key(
        kind: &str,
        queue: Option<&str>,
        args: Option<Value>,
        period_bucket: Option<i64>,
    ) -> Result<Self, core::Error> {
        let canonical_args = args.as_ref().map(core::canonical_json).transpose()?;
        let preimage = core::unique_key_preimage(kind, queue, args.as_ref(), period_bucket)?;
        let unique_key = core::unique_key(kind, queue, args.as_ref(), period_bucket)?;
        Ok(Self::UniqueKey(UniqueKeyCase {
            kind: kind.to_owned(),
            queue: queue.map(str::to_owned),
            args,
            period_bucket,
            canonical_args,
            preimage,
            unique_key,
        }))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UkIn {
    kind: String,
    queue: Option<String>,
    args: Option<serde_json::Value>,
    period_bucket: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UkMid {
    canonical_args_hex: Option<String>,
    preimage_hex: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UkEx {
    unique_key_hex: String,
}

/// `args`: absent or JSON `null` means by_args is off; otherwise a typed value.
fn args(a: Option<&serde_json::Value>) -> FResult<Option<Value>> {
    match a {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(a) => from_typed(a, "input.args")
            .map(Some)
            .map_err(|t| ferr(t.path, t.message)),
    }
}

/// The `unique_key` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::UniqueKey;
    const NAME: &'static str = "unique_key";
    const PREFIX: &'static str = "uk";
    const HAS_INTERMEDIATE: bool = true;
    type Case = UniqueKeyCase;

    fn input_json(c: &UniqueKeyCase) -> Json {
        Json::obj([
            ("kind", Json::str(&c.kind)),
            ("queue", Json::opt_str(c.queue.clone())),
            ("args", c.args.as_ref().map_or(Json::Null, to_typed)),
            (
                "period_bucket",
                Json::opt_str(c.period_bucket.map(|p| p.to_string())),
            ),
        ])
    }

    fn intermediate_json(c: &UniqueKeyCase) -> Option<Json> {
        Some(Json::obj([
            (
                "canonical_args_hex",
                Json::opt_str(c.canonical_args.as_deref().map(hex::encode)),
            ),
            ("preimage_hex", Json::Str(hex::encode(&c.preimage))),
        ]))
    }

    fn expected_json(c: &UniqueKeyCase) -> Json {
        Json::obj([("unique_key_hex", Json::Str(hex::encode(&c.unique_key)))])
    }

    fn recompute(c: &UniqueKeyCase) -> Result<Case, core::Error> {
        Case::unique_key(&c.kind, c.queue.as_deref(), c.args.clone(), c.period_bucket)
    }

    fn parse(
        input: Option<&serde_json::Value>,
        intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: UkIn = serde_part(input, "input")?;
        let mid: UkMid = serde_part(intermediate, "intermediate")?;
        let ex: UkEx = serde_part(expected, "expected")?;
        Ok(Case::UniqueKey(UniqueKeyCase {
            args: args(inp.args.as_ref())?,
            kind: inp.kind,
            queue: inp.queue,
            period_bucket: inp
                .period_bucket
                .map(|p| decimal::<i64>(&p, "input.period_bucket"))
                .transpose()?,
            canonical_args: mid
                .canonical_args_hex
                .map(|h| hex_bytes(&h, "intermediate.canonical_args_hex"))
                .transpose()?,
            preimage: hex_bytes(&mid.preimage_hex, "intermediate.preimage_hex")?,
            unique_key: hex_array(&ex.unique_key_hex, "expected.unique_key_hex")?,
        }))
    }

    fn attempt(input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        let i: UkIn = decode_input(input)?;
        let args = args(i.args.as_ref())?;
        let period = i
            .period_bucket
            .map(|p| {
                p.parse::<i64>()
                    .map_err(|_| ferr("input.period_bucket", "not a decimal i64"))
            })
            .transpose()?;
        let verdict = core::unique_key(&i.kind, i.queue.as_deref(), args.as_ref(), period);
        Ok(crate::reject::refusal(verdict))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Released unique_key: BLAKE3(kind [|| 0x00 || queue] [|| 0x00 || canonical args] [|| 0x00 || period_bucket i64 LE])[0..16]. Informative vectors document the released field-ambiguity collisions.",
            cases::v1,
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's unique_key (same framing): BLAKE3 pre-images at the 64-byte block and 1024-byte chunk boundaries up to nine chunks, and the nesting boundary of args.",
            cases::v1_1,
        )),
    };
}

/// The generator's cases, release by release (inputs only: outputs come from the core).
#[cfg(feature = "maintainer")]
mod cases {
    use awa_conformance_core as core;
    use awa_conformance_core::Value;

    use crate::generate::inputs::{arr, f, nested_arrays, obj, s, text};
    use crate::generate::{id_of, informative, rejected, spec, GenerateError, Spec};
    use crate::model::Case;
    use crate::pretty::Json;
    use crate::Family;

    /// Release v1's cases, in file order (frozen: changing one moves a published byte).
    pub(super) fn v1() -> Result<Vec<Spec>, GenerateError> {
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

    /// A `unique_key` case with kind `b3` and args `{"s": <text>}` whose pre-image is exactly
    /// `len` bytes: 2 (kind) + 1 (0x00) + 8 (`{"s":""}`) + the string.
    fn blake3_case(len: usize, seed: usize) -> Result<Case, core::Error> {
        let s = text(len.saturating_sub(11), seed);
        Case::unique_key("b3", None, Some(obj(&[("s", Value::String(s))])), None)
    }

    /// Release v1.1's cases, in file order (frozen, like v1's).
    pub(super) fn v1_1() -> Result<Vec<Spec>, GenerateError> {
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
}
