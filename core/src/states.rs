//! `unique_states`: the u8 bitmask ↔ PostgreSQL `bit(8)` text mapping of released Awa.

use crate::Error;

/// Job states in Awa's enum order; bit `i` of the mask (and character `i` from the left of the
/// `bit(8)` text) stands for `JOB_STATES[i]`.
pub const JOB_STATES: [&str; 8] = [
    "scheduled",
    "available",
    "running",
    "completed",
    "retryable",
    "failed",
    "cancelled",
    "waiting_external",
];

/// Released Awa's default `UniqueOpts.states`: scheduled, available, running, completed, retryable.
pub const DEFAULT_UNIQUE_STATES: u8 = 0b0001_1111;

/// The `bit(8)` text of a mask: character `i` from the left is `'1'` when bit `i` (value `1<<i`)
/// is set. `0b0001_1111` → `"11111000"`, `1` → `"10000000"`, `0x80` → `"00000001"`.
#[must_use]
pub fn unique_states_bits(mask: u8) -> String {
    (0..8)
        .map(|i| if mask & (1 << i) != 0 { '1' } else { '0' })
        .collect()
}

/// Inverse of [`unique_states_bits`].
///
/// # Errors
/// [`Error::InvalidUniqueStates`] unless `bits` is exactly eight `'0'`/`'1'` characters.
pub fn parse_unique_states_bits(bits: &str) -> Result<u8, Error> {
    if bits.len() != 8 {
        return Err(Error::InvalidUniqueStates(bits.to_owned()));
    }
    bits.bytes()
        .enumerate()
        .try_fold(0u8, |mask, (i, c)| match c {
            b'0' => Ok(mask),
            b'1' => Ok(mask | (1 << i)),
            _ => Err(Error::InvalidUniqueStates(bits.to_owned())),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_examples() {
        assert_eq!(unique_states_bits(DEFAULT_UNIQUE_STATES), "11111000");
        assert_eq!(unique_states_bits(1), "10000000");
        assert_eq!(unique_states_bits(0x80), "00000001");
    }

    #[test]
    fn round_trips_every_mask() {
        for m in 0..=255u8 {
            assert_eq!(parse_unique_states_bits(&unique_states_bits(m)), Ok(m));
        }
        assert!(parse_unique_states_bits("1111").is_err());
        assert!(parse_unique_states_bits("1111100x").is_err());
    }
}
