//! Enqueue-shard routing precedence (ADR-033) and the cross-queue move rule.

use crate::{concurrency_digest, concurrency_shard, ordering_shard, Error, DIGEST_LEN};

/// The largest enqueue-shard width (`queue_meta.enqueue_shards` CHECK 1..=64).
pub const MAX_WIDTH: u8 = 64;
/// The longest ordering or concurrency key the v1 contract accepts, in bytes.
pub const MAX_KEY_LEN: usize = 4096;

/// A validated enqueue-shard width, 1..=64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Width(u8);

impl Width {
    /// Validate a width.
    ///
    /// # Errors
    /// [`Error::InvalidWidth`] outside 1..=64.
    pub fn new(n: i64) -> Result<Self, Error> {
        match u8::try_from(n) {
            Ok(v) if (1..=MAX_WIDTH).contains(&v) => Ok(Self(v)),
            _ => Err(Error::InvalidWidth(n)),
        }
    }

    /// The width.
    #[must_use]
    pub fn get(self) -> u8 {
        self.0
    }
}

/// Which rule chose the enqueue shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteSource {
    /// An explicit ordering key selected the shard.
    OrderingKey,
    /// No ordering key; the concurrency key's digest selected the shard.
    ConcurrencyKey,
    /// Neither key: the rotor may pick any shard in `[0, width)`.
    Rotor,
}

impl RouteSource {
    /// The wire name used in vectors and SQL (`ordering_key`, `concurrency_key`, `rotor`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OrderingKey => "ordering_key",
            Self::ConcurrencyKey => "concurrency_key",
            Self::Rotor => "rotor",
        }
    }

    /// Parse a wire name.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ordering_key" => Some(Self::OrderingKey),
            "concurrency_key" => Some(Self::ConcurrencyKey),
            "rotor" => Some(Self::Rotor),
            _ => None,
        }
    }
}

/// The authoritative routing of one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Which precedence rule applied.
    pub source: RouteSource,
    /// The shard, or `None` for [`RouteSource::Rotor`] (any shard in `[0, width)` conforms).
    pub enqueue_shard: Option<u8>,
    /// The stored concurrency digest: of the concurrency key, else of the ordering key
    /// (the ADR-033 fallback), else `None`.
    pub concurrency_digest: Option<[u8; DIGEST_LEN]>,
}

impl Route {
    /// Whether a job stored on `shard` of a queue of width `width` conforms to this route:
    /// the computed shard exactly, or for the rotor ([`RouteSource::Rotor`], no shard) any
    /// shard in `[0, width)`. The one statement of that rule (the SQL suites, the adapter
    /// comparison and the producer engine all ask it). `shard` is an `i64` so a stored
    /// `smallint` (or a JSON integer) is judged as it is, never truncated first.
    #[must_use]
    pub fn admits(&self, shard: i64, width: Width) -> bool {
        shard_admitted(self.enqueue_shard, shard, width)
    }
}

/// [`Route::admits`] for an expected shard alone: `Some(s)` admits exactly `s`, `None` (the
/// rotor) admits any shard in `[0, width)`.
#[must_use]
pub fn shard_admitted(expected: Option<u8>, shard: i64, width: Width) -> bool {
    match expected {
        Some(want) => i64::from(want) == shard,
        None => (0..i64::from(width.get())).contains(&shard),
    }
}

/// Reject keys longer than [`MAX_KEY_LEN`].
///
/// # Errors
/// [`Error::KeyTooLong`].
pub fn validate_key(key: &[u8]) -> Result<(), Error> {
    if key.len() > MAX_KEY_LEN {
        return Err(Error::KeyTooLong { len: key.len() });
    }
    Ok(())
}

/// Route a job by the v1 precedence: explicit ordering key, else concurrency key, else rotor.
///
/// `Some(b"")` is a key (the empty key), distinct from `None`. When `concurrency_key` is
/// absent and `ordering_key` is present, the stored digest is the ordering key's.
///
/// # Errors
/// [`Error::KeyTooLong`] when either key exceeds [`MAX_KEY_LEN`].
pub fn route(
    width: Width,
    ordering_key: Option<&[u8]>,
    concurrency_key: Option<&[u8]>,
) -> Result<Route, Error> {
    if let Some(k) = ordering_key {
        validate_key(k)?;
    }
    if let Some(k) = concurrency_key {
        validate_key(k)?;
    }
    let digest = concurrency_key.or(ordering_key).map(concurrency_digest);
    Ok(match (ordering_key, digest) {
        (Some(ok), _) => Route {
            source: RouteSource::OrderingKey,
            enqueue_shard: Some(ordering_shard(ok, width)),
            concurrency_digest: digest,
        },
        (None, Some(d)) => Route {
            source: RouteSource::ConcurrencyKey,
            enqueue_shard: Some(concurrency_shard(&d, width)),
            concurrency_digest: Some(d),
        },
        (None, None) => Route {
            source: RouteSource::Rotor,
            enqueue_shard: None,
            concurrency_digest: None,
        },
    })
}

/// The shard a job keeps when moved to another queue: `retained mod destination_width`.
///
/// # Errors
/// [`Error::InvalidShard`] when `retained` is outside 0..=63.
pub fn move_shard(retained: i64, destination: Width) -> Result<u8, Error> {
    match u8::try_from(retained) {
        Ok(r) if r < MAX_WIDTH => Ok(r % destination.get()),
        _ => Err(Error::InvalidShard(retained)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_the_shard_or_any_rotor_shard() {
        let w = Width::new(4).unwrap();
        let rotor = route(w, None, None).unwrap();
        assert!((0..4).all(|s| rotor.admits(s, w)));
        assert!(!rotor.admits(4, w) && !rotor.admits(-1, w));
        let keyed = route(w, Some(b"k"), None).unwrap();
        let s = i64::from(keyed.enqueue_shard.unwrap());
        assert!(keyed.admits(s, w));
        assert!(!keyed.admits((s + 1) % 4, w));
        assert!(!keyed.admits(s + 256, w), "never truncated");
    }

    fn w(n: i64) -> Width {
        Width::new(n).unwrap()
    }

    #[test]
    fn width_range() {
        assert!(Width::new(0).is_err());
        assert!(Width::new(65).is_err());
        assert!(Width::new(-1).is_err());
        assert_eq!(w(64).get(), 64);
    }

    #[test]
    fn precedence_and_fallback() {
        let r = route(w(8), Some(b"o"), Some(b"c")).unwrap();
        assert_eq!(r.source, RouteSource::OrderingKey);
        assert_eq!(r.enqueue_shard, Some(ordering_shard(b"o", w(8))));
        assert_eq!(r.concurrency_digest, Some(concurrency_digest(b"c")));

        let r = route(w(8), Some(b"o"), None).unwrap();
        assert_eq!(r.concurrency_digest, Some(concurrency_digest(b"o")));

        let r = route(w(8), None, Some(b"c")).unwrap();
        assert_eq!(r.source, RouteSource::ConcurrencyKey);
        assert_eq!(
            r.enqueue_shard,
            Some(concurrency_shard(&concurrency_digest(b"c"), w(8)))
        );

        let r = route(w(8), None, None).unwrap();
        assert_eq!(
            (r.source, r.enqueue_shard, r.concurrency_digest),
            (RouteSource::Rotor, None, None)
        );

        let r = route(w(8), Some(b""), None).unwrap();
        assert_eq!(r.source, RouteSource::OrderingKey);
    }

    #[test]
    fn long_keys_are_rejected() {
        let long = vec![0u8; MAX_KEY_LEN + 1];
        assert_eq!(
            route(w(1), Some(&long), None),
            Err(Error::KeyTooLong {
                len: MAX_KEY_LEN + 1
            })
        );
        assert!(route(w(1), None, Some(&long[..MAX_KEY_LEN])).is_ok());
    }

    #[test]
    fn move_is_mod_destination() {
        assert_eq!(move_shard(63, w(8)), Ok(7));
        assert_eq!(move_shard(5, w(64)), Ok(5));
        assert!(move_shard(64, w(8)).is_err());
        assert!(move_shard(-1, w(8)).is_err());
    }

    #[test]
    fn route_source_names_round_trip() {
        for s in [
            RouteSource::OrderingKey,
            RouteSource::ConcurrencyKey,
            RouteSource::Rotor,
        ] {
            assert_eq!(RouteSource::parse(s.as_str()), Some(s));
        }
    }
}
