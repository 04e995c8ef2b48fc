//! The fuzzer's random numbers: SplitMix64, written out here so a seed means the same cases in
//! every version of the kit (no dependency whose stream could change under a version bump).
//!
//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
//! OOPSLA 2014; Vigna's public-domain reference `splitmix64.c`): the state advances by the
//! odd constant `0x9e3779b97f4a7c15`, and each output is the state passed through the
//! finalizer [`mix64`]. The first outputs for state 0 are pinned by a test against the
//! reference values. It is not cryptographic, and need not be: it only has to be fast,
//! well spread, and frozen.
//!
//! Every (seed, case, family) has a stream of its own ([`Rng::for_case`]), so case K of seed N
//! is the same whichever families a target checks, and can be regenerated alone
//! (`--start K --cases 1`).

/// The SplitMix64 increment (2^64 / golden ratio, odd).
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 output finalizer (a bijection of u64).
#[must_use]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator starting at `state` (the reference `splitmix64.c` with `x = state`).
    #[must_use]
    pub fn new(state: u64) -> Self {
        Self { state }
    }

    /// The stream of one case of one family: state `mix64(mix64(mix64(seed) ^ case) ^
    /// stream)`. `mix64` is a bijection, so distinct cases (and streams) of one seed start
    /// at distinct states.
    #[must_use]
    pub fn for_case(seed: u64, case: u64, stream: u64) -> Self {
        Self::new(mix64(mix64(mix64(seed) ^ case) ^ stream))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix64(self.state)
    }

    /// A number in `0..n` (`0` when `n` is 0), by Lemire's multiply-shift: the high 64 bits
    /// of `next_u64() * n`. The bias (at most n / 2^64) is irrelevant here; what matters is
    /// that the mapping is fixed.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..=hi` (`lo` when `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi < lo {
            return lo;
        }
        match (hi - lo).checked_add(1) {
            Some(span) => lo + self.below(span),
            None => self.next_u64(),
        }
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of a non-empty slice (`None` for an empty one).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len() as u64) as usize)
    }

    /// One random byte.
    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 56) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_splitmix64() {
        // splitmix64.c with x = 0: the published first outputs.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
        assert_eq!(r.next_u64(), 0xf88b_b8a8_724c_81ec);
    }

    #[test]
    fn bounded_draws_stay_in_range_and_reach_both_ends() {
        let mut r = Rng::new(7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.range(3, 7);
            assert!((3..=7).contains(&v));
            seen[(v - 3) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.below(0), 0);
        assert_eq!(r.range(5, 4), 5);
        let _ = r.range(0, u64::MAX);
    }

    #[test]
    fn case_streams_differ() {
        let a = Rng::for_case(1, 0, 0).next_u64();
        assert_ne!(a, Rng::for_case(1, 1, 0).next_u64());
        assert_ne!(a, Rng::for_case(1, 0, 1).next_u64());
        assert_ne!(a, Rng::for_case(2, 0, 0).next_u64());
        assert_eq!(a, Rng::for_case(1, 0, 0).next_u64());
    }
}
