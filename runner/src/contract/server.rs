//! Which PostgreSQL servers the kit supports: the majors CI runs every suite on
//! (docs/ci.md, "PostgreSQL versions"), decided from `server_version_num` alone.
//!
//! A server older than [`OLDEST_SUPPORTED`] is refused: the reference schema and the kit's
//! catalog and privilege checks use what 14 added, and a verdict there would be about the
//! kit's SQL, not the database. A major newer than [`NEWEST_TESTED`] is refused too unless the
//! user says `--allow-untested-server`: PostgreSQL 16 and 18 both changed role and catalog
//! details the checks read, so an untested major could give a false verdict; when allowed,
//! the run says so in its provenance. Pure: an integer in, a decision out.

/// The oldest major the kit runs on (and CI tests).
pub const OLDEST_SUPPORTED: u32 = 14;

/// The newest major CI runs every suite on.
pub const NEWEST_TESTED: u32 = 18;

/// The provenance key a run records when it checks an untested newer major.
pub const PROVENANCE_UNTESTED: &str = "server_untested";

/// Why a server is refused (exit 4, one line naming the fix).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// Older than [`OLDEST_SUPPORTED`].
    #[error(
        "PostgreSQL {found} is not supported: the oldest major the kit runs on is \
         {OLDEST_SUPPORTED}; use a PostgreSQL {OLDEST_SUPPORTED} to {NEWEST_TESTED} server"
    )]
    TooOld {
        /// The server's version, e.g. `13.23`.
        found: String,
    },
    /// Newer than [`NEWEST_TESTED`], and not allowed.
    #[error(
        "PostgreSQL {found} is newer than {NEWEST_TESTED}, the newest major the kit is tested \
         on; pass --allow-untested-server to run anyway (the report records it)"
    )]
    Untested {
        /// The server's version, e.g. `19.0`.
        found: String,
    },
}

/// A server the run may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    /// A major CI tests.
    Tested,
    /// A newer major, allowed by `--allow-untested-server`; the value is for the provenance.
    Untested(String),
}

/// The major of a `server_version_num` (e.g. 180004 -> 18; 90624 -> 9, a 9.6 server).
#[must_use]
pub fn major(version_num: i32) -> u32 {
    u32::try_from(version_num / 10_000).unwrap_or(0)
}

/// `server_version_num` as people write it: `18.4`, `14.23` (from 10 on: major.minor),
/// `9.6.24` before that.
#[must_use]
pub fn display(version_num: i32) -> String {
    let v = version_num.max(0);
    if v >= 100_000 {
        format!("{}.{}", v / 10_000, v % 10_000)
    } else {
        format!("{}.{}.{}", v / 10_000, (v / 100) % 100, v % 100)
    }
}

/// The environment form of `--allow-untested-server`, also read by the Python bindings and
/// `fuzz`, which have no such flag.
pub const ALLOW_UNTESTED_SERVER_ENV: &str = "AWA_ALLOW_UNTESTED_SERVER";

/// Whether [`ALLOW_UNTESTED_SERVER_ENV`] is set to a true value (anything but empty, `0`,
/// `false`, `no`, `off`), as the flag's own parser reads it.
#[must_use]
pub fn untested_server_allowed_by_env() -> bool {
    std::env::var(ALLOW_UNTESTED_SERVER_ENV).is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off" | "n" | "f"
        )
    })
}

/// May a run use this server?
///
/// # Errors
/// [`ServerError`] when it is too old, or an untested newer major that is not allowed.
pub fn support(version_num: i32, allow_untested: bool) -> Result<Support, ServerError> {
    let found = display(version_num);
    let m = major(version_num);
    if m < OLDEST_SUPPORTED {
        return Err(ServerError::TooOld { found });
    }
    if m > NEWEST_TESTED {
        if !allow_untested {
            return Err(ServerError::Untested { found });
        }
        return Ok(Support::Untested(format!(
            "PostgreSQL {found} is newer than {NEWEST_TESTED}, the newest major the kit is \
             tested on (--allow-untested-server)"
        )));
    }
    Ok(Support::Tested)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tested_major_is_accepted_with_or_without_the_flag() {
        for m in OLDEST_SUPPORTED..=NEWEST_TESTED {
            let num = i32::try_from(m).unwrap() * 10_000 + 3;
            assert_eq!(support(num, false), Ok(Support::Tested), "{m}");
            assert_eq!(support(num, true), Ok(Support::Tested), "{m}");
        }
    }

    #[test]
    fn older_majors_are_refused_naming_the_minimum_even_when_untested_ones_are_allowed() {
        for num in [130_023, 120_022, 100_000, 90_624, 0, -1] {
            let e = support(num, true).unwrap_err();
            assert!(matches!(e, ServerError::TooOld { .. }), "{num}");
            let line = e.to_string();
            assert!(
                line.contains("oldest major the kit runs on is 14"),
                "{line}"
            );
            assert!(!line.contains('\n'), "{line}");
        }
        assert!(support(130_023, false)
            .unwrap_err()
            .to_string()
            .starts_with("PostgreSQL 13.23 is not supported"));
    }

    #[test]
    fn a_newer_major_needs_the_flag_and_is_then_recorded() {
        let e = support(190_000, false).unwrap_err();
        assert_eq!(
            e,
            ServerError::Untested {
                found: "19.0".into()
            }
        );
        assert!(e.to_string().contains("--allow-untested-server"));
        let Ok(Support::Untested(why)) = support(190_000, true) else {
            panic!("19 with the flag is allowed, as untested");
        };
        assert!(why.contains("PostgreSQL 19.0"), "{why}");
    }

    #[test]
    fn versions_display_as_people_write_them() {
        assert_eq!(display(180_004), "18.4");
        assert_eq!(display(140_023), "14.23");
        assert_eq!(display(90_624), "9.6.24");
        assert_eq!(major(180_004), 18);
        assert_eq!(major(90_624), 9);
    }
}
