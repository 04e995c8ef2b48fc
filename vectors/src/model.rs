//! Typed vectors: per-family input / intermediate / expected, built with the core.

use awa_conformance_core as core;
use awa_conformance_core::{RouteSource, Value, Width, DIGEST_LEN, UNIQUE_KEY_LEN};
use serde::Deserialize;

use crate::pretty::Json;
use crate::typed::{from_typed, to_typed};
use crate::{hex, Family};

/// Whether a producer must reproduce a vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    /// A producer must reproduce it.
    Normative,
    /// Documents a released hazard; still checked against the reference core.
    Informative,
}

impl Status {
    /// The wire name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normative => "normative",
            Self::Informative => "informative",
        }
    }
}

/// One vector: metadata plus the family-specific case.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// `<prefix>-<12 hex>`, content-addressed (ADR 0001 D8).
    pub id: String,
    /// One line.
    pub description: String,
    /// Normative or informative.
    pub status: Status,
    /// Sorted tags such as `edge:empty` or `hazard:field-ambiguity`.
    pub tags: Vec<String>,
    /// Input, intermediate layers and expected output.
    pub case: Case,
    /// The reason of the erratum that corrected `description` / `tags` (the file keeps the
    /// frozen text; see `vectors/v1.1/errata.json`), or `None`.
    pub erratum: Option<String>,
}

/// The family-specific content of a vector.
#[derive(Debug, Clone, PartialEq)]
pub enum Case {
    /// `canonical_json`.
    CanonicalJson(CanonicalJsonCase),
    /// `unique_key`.
    UniqueKey(UniqueKeyCase),
    /// `ordering_shard`.
    OrderingShard(OrderingShardCase),
    /// `partition`.
    Partition(PartitionCase),
    /// `concurrency_digest`.
    ConcurrencyDigest(ConcurrencyDigestCase),
    /// `concurrency_shard`.
    ConcurrencyShard(ConcurrencyShardCase),
    /// `routing_precedence`.
    RoutingPrecedence(RoutingPrecedenceCase),
    /// `move_shard`.
    MoveShard(MoveShardCase),
    /// `unique_states`.
    UniqueStates(UniqueStatesCase),
    /// An input the contract refuses (any family with a rejected form, v1.1 on).
    Rejected(RejectedCase),
}

/// A rejected input: the producer must refuse it with the stable error code
/// (`expected: {"error": "<code>"}`; the codes are [`crate::ERROR_CODES`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RejectedCase {
    /// The family whose function is given the input.
    pub family: Family,
    /// The `input` object, members in write order.
    pub input: Json,
    /// The error code the core raises for it (`None`: the core accepted the input).
    pub error: Option<String>,
}

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

/// `ordering_shard`: one key at every width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderingShardCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `hash64`.
    pub hash64: u64,
    /// expected `shards`: `shards[i]` at width `i + 1`, 64 entries.
    pub shards: Vec<u8>,
}

/// `partition`: PartitionedQueue routing of an ordering key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// input `logical_queue`.
    pub logical_queue: String,
    /// input `partitions` (1..=32767).
    pub partitions: u16,
    /// intermediate `hash64`.
    pub hash64: u64,
    /// intermediate `partition_hash64`.
    pub partition_hash64: u64,
    /// expected `partition`.
    pub partition: u16,
    /// expected `physical_queue`.
    pub physical_queue: String,
}

/// `concurrency_digest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrencyDigestCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `preimage_hex`.
    pub preimage: Vec<u8>,
    /// expected `digest_hex`.
    pub digest: [u8; DIGEST_LEN],
}

/// `concurrency_shard`: one key's digest at every width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConcurrencyShardCase {
    /// input `key_hex`.
    pub key: Vec<u8>,
    /// intermediate `digest_hex`.
    pub digest: [u8; DIGEST_LEN],
    /// intermediate `first8_u64`.
    pub first8_u64: u64,
    /// expected `shards`: `shards[i]` at width `i + 1`, 64 entries.
    pub shards: Vec<u8>,
}

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

/// `move_shard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MoveShardCase {
    /// input `retained_shard` (0..=63).
    pub retained_shard: u8,
    /// input `destination_width` (1..=64).
    pub destination_width: u8,
    /// expected `shard`.
    pub shard: u8,
}

/// `unique_states`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniqueStatesCase {
    /// input `mask`.
    pub mask: u8,
    /// expected `bits` (8 chars, leftmost = scheduled).
    pub bits: String,
    /// expected `states` (names in enum order).
    pub states: Vec<String>,
}

fn width(n: u8) -> Result<Width, core::Error> {
    Width::new(i64::from(n))
}

fn shards_at_every_width(f: impl Fn(Width) -> u8) -> Result<Vec<u8>, core::Error> {
    (1..=core::MAX_WIDTH).map(|w| width(w).map(&f)).collect()
}

fn first8(d: &[u8; DIGEST_LEN]) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(d.get(..8).unwrap_or(&[0; 8]));
    u64::from_be_bytes(b)
}

impl Case {
    /// The family this case belongs to.
    #[must_use]
    pub fn family(&self) -> Family {
        match self {
            Self::CanonicalJson(_) => Family::CanonicalJson,
            Self::UniqueKey(_) => Family::UniqueKey,
            Self::OrderingShard(_) => Family::OrderingShard,
            Self::Partition(_) => Family::Partition,
            Self::ConcurrencyDigest(_) => Family::ConcurrencyDigest,
            Self::ConcurrencyShard(_) => Family::ConcurrencyShard,
            Self::RoutingPrecedence(_) => Family::RoutingPrecedence,
            Self::MoveShard(_) => Family::MoveShard,
            Self::UniqueStates(_) => Family::UniqueStates,
            Self::Rejected(c) => c.family,
        }
    }

    /// A rejected-input case for `family`: the core is run on `input` and the error code it
    /// raises recorded (`error: None` when it accepts the input, which a generator must refuse).
    ///
    /// # Errors
    /// The input does not decode as `family`'s input (a bug in the case definition).
    pub fn rejected(family: Family, input: Json) -> Result<Self, String> {
        let error = crate::reject::attempt(family, &input.to_serde())
            .map_err(|f| format!("{}: {}", f.path, f.message))?
            .map(str::to_owned);
        Ok(Self::Rejected(RejectedCase {
            family,
            input,
            error,
        }))
    }

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

    /// An `ordering_shard` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn ordering_shard(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        Ok(Self::OrderingShard(OrderingShardCase {
            key: key.to_vec(),
            hash64: core::ordering_key_hash64(key),
            shards: shards_at_every_width(|w| core::ordering_shard(key, w))?,
        }))
    }

    /// A `partition` case.
    ///
    /// # Errors
    /// [`core::Error::InvalidPartitions`] outside 1..=32767.
    pub fn partition(
        key: &[u8],
        logical_queue: &str,
        partitions: u16,
    ) -> Result<Self, core::Error> {
        let p = core::Partitions::new(i64::from(partitions))?;
        let partition = core::partition_for_ordering_key(key, p);
        Ok(Self::Partition(PartitionCase {
            key: key.to_vec(),
            logical_queue: logical_queue.to_owned(),
            partitions,
            hash64: core::ordering_key_hash64(key),
            partition_hash64: core::partition_hash64(key),
            partition,
            physical_queue: core::physical_queue_name(logical_queue, partition),
        }))
    }

    /// A `concurrency_digest` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn concurrency_digest(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        Ok(Self::ConcurrencyDigest(ConcurrencyDigestCase {
            key: key.to_vec(),
            preimage: core::concurrency_preimage(key),
            digest: core::concurrency_digest(key),
        }))
    }

    /// A `concurrency_shard` case.
    ///
    /// # Errors
    /// [`core::Error::KeyTooLong`] beyond 4096 bytes.
    pub fn concurrency_shard(key: &[u8]) -> Result<Self, core::Error> {
        core::validate_key(key)?;
        let digest = core::concurrency_digest(key);
        Ok(Self::ConcurrencyShard(ConcurrencyShardCase {
            key: key.to_vec(),
            digest,
            first8_u64: first8(&digest),
            shards: shards_at_every_width(|w| core::concurrency_shard(&digest, w))?,
        }))
    }

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

    /// A `move_shard` case.
    ///
    /// # Errors
    /// Invalid retained shard or destination width.
    pub fn move_shard(retained_shard: u8, destination_width: u8) -> Result<Self, core::Error> {
        let shard = core::move_shard(i64::from(retained_shard), width(destination_width)?)?;
        Ok(Self::MoveShard(MoveShardCase {
            retained_shard,
            destination_width,
            shard,
        }))
    }

    /// A `unique_states` case.
    #[must_use]
    pub fn unique_states(mask: u8) -> Self {
        let states = core::JOB_STATES
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1u8 << i) != 0)
            .map(|(_, s)| (*s).to_owned())
            .collect();
        Self::UniqueStates(UniqueStatesCase {
            mask,
            bits: core::unique_states_bits(mask),
            states,
        })
    }

    /// The same input with every intermediate and expected field recomputed by the core.
    ///
    /// # Errors
    /// The core's error for an input it rejects.
    pub fn recompute(&self) -> Result<Self, core::Error> {
        match self {
            Self::CanonicalJson(c) => Self::canonical_json(c.value.clone()),
            Self::UniqueKey(c) => {
                Self::unique_key(&c.kind, c.queue.as_deref(), c.args.clone(), c.period_bucket)
            }
            Self::OrderingShard(c) => Self::ordering_shard(&c.key),
            Self::Partition(c) => Self::partition(&c.key, &c.logical_queue, c.partitions),
            Self::ConcurrencyDigest(c) => Self::concurrency_digest(&c.key),
            Self::ConcurrencyShard(c) => Self::concurrency_shard(&c.key),
            Self::RoutingPrecedence(c) => Self::routing_precedence(
                c.width,
                c.ordering_key.as_deref(),
                c.concurrency_key.as_deref(),
            ),
            Self::MoveShard(c) => Self::move_shard(c.retained_shard, c.destination_width),
            Self::UniqueStates(c) => Ok(Self::unique_states(c.mask)),
            Self::Rejected(c) => Ok(Self::Rejected(RejectedCase {
                family: c.family,
                input: c.input.clone(),
                error: match crate::reject::attempt(c.family, &c.input.to_serde()) {
                    Ok(code) => code.map(str::to_owned),
                    Err(f) => Some(format!("(undecodable input: {}: {})", f.path, f.message)),
                },
            })),
        }
    }

    /// The `input` object as written in a file.
    #[must_use]
    pub fn input_json(&self) -> Json {
        let key = |k: &[u8]| ("key_hex", Json::Str(hex::encode(k)));
        let opt_hex = |k: &Option<Vec<u8>>| Json::opt_str(k.as_deref().map(hex::encode));
        match self {
            Self::CanonicalJson(c) => Json::obj([("value", to_typed(&c.value))]),
            Self::UniqueKey(c) => Json::obj([
                ("kind", Json::str(&c.kind)),
                ("queue", Json::opt_str(c.queue.clone())),
                ("args", c.args.as_ref().map_or(Json::Null, to_typed)),
                (
                    "period_bucket",
                    Json::opt_str(c.period_bucket.map(|p| p.to_string())),
                ),
            ]),
            Self::OrderingShard(c) => Json::obj([key(&c.key)]),
            Self::Partition(c) => Json::obj([
                key(&c.key),
                ("logical_queue", Json::str(&c.logical_queue)),
                ("partitions", Json::Int(i64::from(c.partitions))),
            ]),
            Self::ConcurrencyDigest(c) => Json::obj([key(&c.key)]),
            Self::ConcurrencyShard(c) => Json::obj([key(&c.key)]),
            Self::RoutingPrecedence(c) => Json::obj([
                ("width", Json::Int(i64::from(c.width))),
                ("ordering_key_hex", opt_hex(&c.ordering_key)),
                ("concurrency_key_hex", opt_hex(&c.concurrency_key)),
            ]),
            Self::MoveShard(c) => Json::obj([
                ("retained_shard", Json::Int(i64::from(c.retained_shard))),
                (
                    "destination_width",
                    Json::Int(i64::from(c.destination_width)),
                ),
            ]),
            Self::UniqueStates(c) => Json::obj([("mask", Json::Int(i64::from(c.mask)))]),
            Self::Rejected(c) => c.input.clone(),
        }
    }

    /// The `intermediate` object, for the families that have one.
    #[must_use]
    pub fn intermediate_json(&self) -> Option<Json> {
        let dec = |u: u64| Json::Str(u.to_string());
        match self {
            Self::UniqueKey(c) => Some(Json::obj([
                (
                    "canonical_args_hex",
                    Json::opt_str(c.canonical_args.as_deref().map(hex::encode)),
                ),
                ("preimage_hex", Json::Str(hex::encode(&c.preimage))),
            ])),
            Self::OrderingShard(c) => Some(Json::obj([("hash64", dec(c.hash64))])),
            Self::Partition(c) => Some(Json::obj([
                ("hash64", dec(c.hash64)),
                ("partition_hash64", dec(c.partition_hash64)),
            ])),
            Self::ConcurrencyDigest(c) => Some(Json::obj([(
                "preimage_hex",
                Json::Str(hex::encode(&c.preimage)),
            )])),
            Self::ConcurrencyShard(c) => Some(Json::obj([
                ("digest_hex", Json::Str(hex::encode(&c.digest))),
                ("first8_u64", dec(c.first8_u64)),
            ])),
            Self::CanonicalJson(_)
            | Self::RoutingPrecedence(_)
            | Self::MoveShard(_)
            | Self::UniqueStates(_)
            | Self::Rejected(_) => None,
        }
    }

    /// The `expected` object as written in a file.
    #[must_use]
    pub fn expected_json(&self) -> Json {
        let shards = |s: &[u8]| Json::Arr(s.iter().map(|&x| Json::Int(i64::from(x))).collect());
        match self {
            Self::CanonicalJson(c) => Json::obj([
                ("canonical_hex", Json::Str(hex::encode(&c.canonical))),
                ("canonical_text", Json::str(&c.canonical_text)),
            ]),
            Self::UniqueKey(c) => {
                Json::obj([("unique_key_hex", Json::Str(hex::encode(&c.unique_key)))])
            }
            Self::OrderingShard(c) => Json::obj([("shards", shards(&c.shards))]),
            Self::Partition(c) => Json::obj([
                ("partition", Json::Int(i64::from(c.partition))),
                ("physical_queue", Json::str(&c.physical_queue)),
            ]),
            Self::ConcurrencyDigest(c) => {
                Json::obj([("digest_hex", Json::Str(hex::encode(&c.digest)))])
            }
            Self::ConcurrencyShard(c) => Json::obj([("shards", shards(&c.shards))]),
            Self::RoutingPrecedence(c) => Json::obj([
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
            ]),
            Self::MoveShard(c) => Json::obj([("shard", Json::Int(i64::from(c.shard)))]),
            Self::UniqueStates(c) => Json::obj([
                ("bits", Json::str(&c.bits)),
                (
                    "states",
                    Json::Arr(c.states.iter().map(Json::str).collect()),
                ),
            ]),
            Self::Rejected(c) => Json::obj([("error", Json::opt_str(c.error.clone()))]),
        }
    }
}

impl Vector {
    /// The vector object as written in a file (keys in ADR 0002 order).
    #[must_use]
    pub fn to_json(&self) -> Json {
        let mut m = vec![
            ("id".to_owned(), Json::str(&self.id)),
            ("description".to_owned(), Json::str(&self.description)),
            ("status".to_owned(), Json::str(self.status.as_str())),
            (
                "tags".to_owned(),
                Json::Arr(self.tags.iter().map(Json::str).collect()),
            ),
            ("input".to_owned(), self.case.input_json()),
        ];
        if let Some(i) = self.case.intermediate_json() {
            m.push(("intermediate".to_owned(), i));
        }
        m.push(("expected".to_owned(), self.case.expected_json()));
        Json::Obj(m)
    }
}

// ---- parsing (file JSON → typed case) ----

/// A rejected-input vector: `expected` is exactly `{"error": "<code>"}`, no intermediate, and
/// the input decodes as the family's (the core's verdict is left to `check_vector`).
fn parse_rejected(
    family: Family,
    input: Option<&serde_json::Value>,
    intermediate: Option<&serde_json::Value>,
    expected: Option<&serde_json::Value>,
    error: &serde_json::Value,
) -> FResult<Case> {
    if intermediate.is_some() {
        return Err(ferr(
            "intermediate",
            "a rejected-input vector has no intermediate layer; remove the member",
        ));
    }
    if expected
        .and_then(serde_json::Value::as_object)
        .map(serde_json::Map::len)
        != Some(1)
    {
        return Err(ferr(
            "expected",
            "a rejected-input vector's expected object has exactly one member, \"error\"",
        ));
    }
    let code = error
        .as_str()
        .filter(|c| crate::reject::ERROR_CODES.contains(c))
        .ok_or_else(|| {
            ferr(
                "expected.error",
                format!(
                    "{error} is not one of the error codes {:?}",
                    crate::reject::ERROR_CODES
                ),
            )
        })?;
    let input = input.ok_or_else(|| ferr("input", "missing member \"input\""))?;
    crate::reject::attempt(family, input)?;
    Ok(Case::Rejected(RejectedCase {
        family,
        input: Json::from_serde(input),
        error: Some(code.to_owned()),
    }))
}

/// A field that does not decode: its JSON path inside the vector and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FieldError {
    pub(crate) path: String,
    pub(crate) message: String,
}

type FResult<T> = Result<T, FieldError>;

fn ferr(path: impl Into<String>, message: impl Into<String>) -> FieldError {
    FieldError {
        path: path.into(),
        message: message.into(),
    }
}

fn serde_part<T: for<'de> Deserialize<'de>>(
    v: Option<&serde_json::Value>,
    path: &str,
) -> FResult<T> {
    let v = v.ok_or_else(|| ferr(path, format!("missing member \"{path}\"")))?;
    T::deserialize(v).map_err(|e| ferr(path, e.to_string()))
}

fn hex_bytes(s: &str, path: &str) -> FResult<Vec<u8>> {
    hex::decode(s).ok_or_else(|| {
        ferr(
            path,
            format!("{s:.40?} is not lowercase hex of whole bytes"),
        )
    })
}

fn hex_array<const N: usize>(s: &str, path: &str) -> FResult<[u8; N]> {
    let v = hex_bytes(s, path)?;
    <[u8; N]>::try_from(v.as_slice()).map_err(|_| {
        ferr(
            path,
            format!("expected {} hex digits, found {}", N * 2, s.len()),
        )
    })
}

fn decimal<T: std::str::FromStr + ToString>(s: &str, path: &str) -> FResult<T> {
    s.parse::<T>()
        .ok()
        .filter(|v| v.to_string() == s)
        .ok_or_else(|| {
            ferr(
                path,
                format!("{s:?} is not a canonical decimal of the required integer type"),
            )
        })
}

fn shards(v: Vec<u8>, path: &str) -> FResult<Vec<u8>> {
    if v.len() == usize::from(core::MAX_WIDTH) {
        Ok(v)
    } else {
        Err(ferr(
            path,
            format!("expected 64 shards (widths 1..=64), found {}", v.len()),
        ))
    }
}

fn check_core<T>(r: Result<T, core::Error>, path: &str) -> FResult<T> {
    r.map_err(|e| ferr(path, e.to_string()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyIn {
    key_hex: String,
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
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Hash64Mid {
    hash64: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShardsEx {
    shards: Vec<u8>,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtIn {
    key_hex: String,
    logical_queue: String,
    partitions: u16,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtMid {
    hash64: String,
    partition_hash64: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PtEx {
    partition: u16,
    physical_queue: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreMid {
    preimage_hex: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DigestEx {
    digest_hex: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CsMid {
    digest_hex: String,
    first8_u64: String,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RpIn {
    width: u8,
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
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsIn {
    retained_shard: u8,
    destination_width: u8,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MsEx {
    shard: u8,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsIn {
    mask: u8,
}
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UsEx {
    bits: String,
    states: Vec<String>,
}

/// Decode a vector's `input` / `intermediate` / `expected` members for `family`.
pub(crate) fn parse_case(
    family: Family,
    input: Option<&serde_json::Value>,
    intermediate: Option<&serde_json::Value>,
    expected: Option<&serde_json::Value>,
) -> FResult<Case> {
    let has_mid = matches!(
        family,
        Family::UniqueKey
            | Family::OrderingShard
            | Family::Partition
            | Family::ConcurrencyDigest
            | Family::ConcurrencyShard
    );
    if !has_mid && intermediate.is_some() {
        return Err(ferr(
            "intermediate",
            format!("{family} vectors have no intermediate layer; remove the member"),
        ));
    }
    let (i, m, e) = ("input", "intermediate", "expected");
    if let Some(error) = expected.and_then(|x| x.get("error")) {
        return parse_rejected(family, input, intermediate, expected, error);
    }
    Ok(match family {
        Family::CanonicalJson => {
            let inp: CjIn = serde_part(input, i)?;
            let ex: CjEx = serde_part(expected, e)?;
            let value =
                from_typed(&inp.value, "input.value").map_err(|t| ferr(t.path, t.message))?;
            Case::CanonicalJson(CanonicalJsonCase {
                value,
                canonical: hex_bytes(&ex.canonical_hex, "expected.canonical_hex")?,
                canonical_text: ex.canonical_text,
            })
        }
        Family::UniqueKey => {
            let inp: UkIn = serde_part(input, i)?;
            let mid: UkMid = serde_part(intermediate, m)?;
            let ex: UkEx = serde_part(expected, e)?;
            let args = match inp.args {
                None | Some(serde_json::Value::Null) => None,
                Some(a) => Some(from_typed(&a, "input.args").map_err(|t| ferr(t.path, t.message))?),
            };
            Case::UniqueKey(UniqueKeyCase {
                kind: inp.kind,
                queue: inp.queue,
                args,
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
            })
        }
        Family::OrderingShard => {
            let inp: KeyIn = serde_part(input, i)?;
            let mid: Hash64Mid = serde_part(intermediate, m)?;
            let ex: ShardsEx = serde_part(expected, e)?;
            let key = hex_bytes(&inp.key_hex, "input.key_hex")?;
            check_core(core::validate_key(&key), "input.key_hex")?;
            Case::OrderingShard(OrderingShardCase {
                key,
                hash64: decimal(&mid.hash64, "intermediate.hash64")?,
                shards: shards(ex.shards, "expected.shards")?,
            })
        }
        Family::Partition => {
            let inp: PtIn = serde_part(input, i)?;
            let mid: PtMid = serde_part(intermediate, m)?;
            let ex: PtEx = serde_part(expected, e)?;
            check_core(
                core::Partitions::new(i64::from(inp.partitions)),
                "input.partitions",
            )?;
            Case::Partition(PartitionCase {
                key: hex_bytes(&inp.key_hex, "input.key_hex")?,
                logical_queue: inp.logical_queue,
                partitions: inp.partitions,
                hash64: decimal(&mid.hash64, "intermediate.hash64")?,
                partition_hash64: decimal(&mid.partition_hash64, "intermediate.partition_hash64")?,
                partition: ex.partition,
                physical_queue: ex.physical_queue,
            })
        }
        Family::ConcurrencyDigest => {
            let inp: KeyIn = serde_part(input, i)?;
            let mid: PreMid = serde_part(intermediate, m)?;
            let ex: DigestEx = serde_part(expected, e)?;
            let key = hex_bytes(&inp.key_hex, "input.key_hex")?;
            check_core(core::validate_key(&key), "input.key_hex")?;
            Case::ConcurrencyDigest(ConcurrencyDigestCase {
                key,
                preimage: hex_bytes(&mid.preimage_hex, "intermediate.preimage_hex")?,
                digest: hex_array(&ex.digest_hex, "expected.digest_hex")?,
            })
        }
        Family::ConcurrencyShard => {
            let inp: KeyIn = serde_part(input, i)?;
            let mid: CsMid = serde_part(intermediate, m)?;
            let ex: ShardsEx = serde_part(expected, e)?;
            let key = hex_bytes(&inp.key_hex, "input.key_hex")?;
            check_core(core::validate_key(&key), "input.key_hex")?;
            Case::ConcurrencyShard(ConcurrencyShardCase {
                key,
                digest: hex_array(&mid.digest_hex, "intermediate.digest_hex")?,
                first8_u64: decimal(&mid.first8_u64, "intermediate.first8_u64")?,
                shards: shards(ex.shards, "expected.shards")?,
            })
        }
        Family::RoutingPrecedence => {
            let inp: RpIn = serde_part(input, i)?;
            let ex: RpEx = serde_part(expected, e)?;
            check_core(width(inp.width), "input.width")?;
            let key = |k: Option<String>, p: &str| -> FResult<Option<Vec<u8>>> {
                let k = k.map(|h| hex_bytes(&h, p)).transpose()?;
                if let Some(k) = &k {
                    check_core(core::validate_key(k), p)?;
                }
                Ok(k)
            };
            Case::RoutingPrecedence(RoutingPrecedenceCase {
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
            })
        }
        Family::MoveShard => {
            let inp: MsIn = serde_part(input, i)?;
            let ex: MsEx = serde_part(expected, e)?;
            check_core(width(inp.destination_width), "input.destination_width")?;
            check_core(
                core::move_shard(
                    i64::from(inp.retained_shard),
                    Width::new(1).map_err(|x| ferr(i, x.to_string()))?,
                ),
                "input.retained_shard",
            )?;
            Case::MoveShard(MoveShardCase {
                retained_shard: inp.retained_shard,
                destination_width: inp.destination_width,
                shard: ex.shard,
            })
        }
        Family::UniqueStates => {
            let inp: UsIn = serde_part(input, i)?;
            let ex: UsEx = serde_part(expected, e)?;
            Case::UniqueStates(UniqueStatesCase {
                mask: inp.mask,
                bits: ex.bits,
                states: ex.states,
            })
        }
    })
}
