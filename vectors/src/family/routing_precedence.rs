//! Family `routing_precedence`: contract v1 D3, ordering key, else concurrency key, else rotor.

use awa_conformance_core as core;
use awa_conformance_core::{RouteSource, DIGEST_LEN};
use serde::Deserialize;

use super::{Family, FamilyDef};
#[cfg(feature = "maintainer")]
use crate::generate::{ReleaseFile, Releases};
use crate::hex;
use crate::model::Case;
use crate::pretty::Json;
use crate::wire::{
    check_core, decode_input, ferr, hex_array, opt_key, serde_part, valid_key, width, FResult,
    FieldError,
};

/// `routing_precedence`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutingPrecedenceCase {
    /// input `width` (1..=64).
    pub width: u8,
    /// input `ordering_key_hex` (`None` = absent; empty = the empty key).
    pub ordering_key: Option<Vec<u8>>,
    /// input `concurrency_key_hex`.
    pub concurrency_key: Option<Vec<u8>>,
    /// expected `route_source`.
    pub route_source: RouteSource,
    /// expected `enqueue_shard` (`None` for the rotor: any shard in `[0, width)` conforms).
    pub enqueue_shard: Option<u8>,
    /// expected `concurrency_digest_hex`.
    pub concurrency_digest: Option<[u8; DIGEST_LEN]>,
}

impl Case {
    /// A `routing_precedence` case.
    ///
    /// # Errors
    /// Invalid width or an over-long key.
    pub fn routing_precedence(
        width_n: u8,
        ordering_key: Option<&[u8]>,
        concurrency_key: Option<&[u8]>,
    ) -> Result<Self, core::Error> {
        let r = core::route(width(width_n)?, ordering_key, concurrency_key)?;
        Ok(Self::RoutingPrecedence(RoutingPrecedenceCase {
            width: width_n,
            ordering_key: ordering_key.map(<[u8]>::to_vec),
            concurrency_key: concurrency_key.map(<[u8]>::to_vec),
            route_source: r.source,
            enqueue_shard: r.enqueue_shard,
            concurrency_digest: r.concurrency_digest,
        }))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpIn {
    width: u8,
    ordering_key_hex: Option<String>,
    concurrency_key_hex: Option<String>,
}
/// A rejected input: the width unconstrained.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpInAny {
    width: i64,
    ordering_key_hex: Option<String>,
    concurrency_key_hex: Option<String>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpEx {
    route_source: String,
    enqueue_shard: Option<u8>,
    concurrency_digest_hex: Option<String>,
}

/// The `routing_precedence` family.
pub(crate) struct Def;

impl FamilyDef for Def {
    const FAMILY: Family = Family::RoutingPrecedence;
    const NAME: &'static str = "routing_precedence";
    const PREFIX: &'static str = "rp";
    const HAS_INTERMEDIATE: bool = false;
    type Case = RoutingPrecedenceCase;

    fn input_json(c: &RoutingPrecedenceCase) -> Json {
        let opt_hex = |k: &Option<Vec<u8>>| Json::opt_str(k.as_deref().map(hex::encode));
        Json::obj([
            ("width", Json::Int(i64::from(c.width))),
            ("ordering_key_hex", opt_hex(&c.ordering_key)),
            ("concurrency_key_hex", opt_hex(&c.concurrency_key)),
        ])
    }

    fn expected_json(c: &RoutingPrecedenceCase) -> Json {
        Json::obj([
            ("route_source", Json::str(c.route_source.as_str())),
            (
                "enqueue_shard",
                c.enqueue_shard
                    .map_or(Json::Null, |s| Json::Int(i64::from(s))),
            ),
            (
                "concurrency_digest_hex",
                Json::opt_str(c.concurrency_digest.as_ref().map(|d| hex::encode(d))),
            ),
        ])
    }

    fn recompute(c: &RoutingPrecedenceCase) -> Result<Case, core::Error> {
        Case::routing_precedence(
            c.width,
            c.ordering_key.as_deref(),
            c.concurrency_key.as_deref(),
        )
    }

    fn parse(
        input: Option<&serde_json::Value>,
        _intermediate: Option<&serde_json::Value>,
        expected: Option<&serde_json::Value>,
    ) -> FResult<Case> {
        let inp: RpIn = serde_part(input, "input")?;
        let ex: RpEx = serde_part(expected, "expected")?;
        check_core(width(inp.width), "input.width")?;
        let key = |k: Option<String>, p: &str| k.map(|h| valid_key(&h, p)).transpose();
        Ok(Case::RoutingPrecedence(RoutingPrecedenceCase {
            width: inp.width,
            ordering_key: key(inp.ordering_key_hex, "input.ordering_key_hex")?,
            concurrency_key: key(inp.concurrency_key_hex, "input.concurrency_key_hex")?,
            route_source: RouteSource::parse(&ex.route_source).ok_or_else(|| {
                ferr(
                    "expected.route_source",
                    format!(
                        "{:?} is not ordering_key, concurrency_key or rotor",
                        ex.route_source
                    ),
                )
            })?,
            enqueue_shard: ex.enqueue_shard,
            concurrency_digest: ex
                .concurrency_digest_hex
                .map(|h| hex_array(&h, "expected.concurrency_digest_hex"))
                .transpose()?,
        }))
    }

    fn attempt(input: &serde_json::Value) -> Result<Option<&'static str>, FieldError> {
        let i: RpInAny = decode_input(input)?;
        let ok = opt_key(i.ordering_key_hex.as_deref(), "input.ordering_key_hex")?;
        let ck = opt_key(
            i.concurrency_key_hex.as_deref(),
            "input.concurrency_key_hex",
        )?;
        let verdict =
            core::Width::new(i.width).and_then(|w| core::route(w, ok.as_deref(), ck.as_deref()));
        Ok(crate::reject::refusal(verdict))
    }

    #[cfg(feature = "maintainer")]
    const RELEASES: Releases = Releases {
        v1: Some(ReleaseFile::new(
            "Contract v1 D3: ordering key, else concurrency key, else rotor (enqueue_shard null: any shard in [0, width) conforms). The stored digest falls back to the ordering key's.",
            || Ok(cases::v1()),
        )),
        v1_1: Some(ReleaseFile::new(
            "v1.1 additions to v1's routing_precedence (same rule): many distinct keys (bytes 0x80..0xff, U+0080..U+00FF text, short non-UTF-8 keys) and refused widths and keys.",
            || Ok(cases::v1_1()),
        )),
    };
}

/// The generator's cases, release by release (inputs only: outputs come from the core).
#[cfg(feature = "maintainer")]
mod cases {
    use crate::generate::inputs::patterned;
    use crate::generate::{rejected, spec, Spec};
    use crate::model::Case;
    use crate::pretty::Json;
    use crate::Family;

    /// Release v1's cases, in file order (frozen: changing one moves a published byte).
    pub(super) fn v1() -> Vec<Spec> {
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

    /// Release v1.1's cases, in file order (frozen, like v1's).
    pub(super) fn v1_1() -> Vec<Spec> {
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
}
