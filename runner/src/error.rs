//! Typed errors of the runner, each mapped to one exit code by [`Error::exit_code`].
//!
//! Every message is one line that names the file, vector ID or option at fault and the fix.
//! Messages never contain a DSN password: callers pass DSNs through
//! [`crate::redact::redact_secrets`] before putting them in an error.

use std::path::PathBuf;

use crate::exit;

/// Everything that can stop a run before it produces a conformance verdict.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command-line combination clap cannot express (e.g. `--markdown -` with `--format json`).
    #[error("usage: {0}")]
    Usage(String),

    /// The expected-failures file is unusable; `detail` names the entry and the fix.
    #[error("expected-failures file {path}: {detail}")]
    ExpectedFailures {
        /// The file given to `--expected-failures`.
        path: PathBuf,
        /// What is wrong and how to fix it.
        detail: String,
    },

    /// The vector set failed verification (schema, manifest, parse, core mismatch).
    #[error("vector set invalid: {detail}")]
    VectorsInvalid {
        /// Which file / vector ID and what is wrong.
        detail: String,
    },

    /// `vectors regenerate --check` found a file that differs from the generator output.
    #[error("vectors regenerate --check: {detail}")]
    RegenerateMismatch {
        /// The first differing file and line (from the vectors crate), with the fix.
        detail: String,
    },

    /// Could not connect to PostgreSQL (DSN already redacted).
    #[error("cannot connect to PostgreSQL: {detail}")]
    Connect {
        /// Target (redacted) and cause, with the fix.
        detail: String,
    },

    /// The harness itself failed (connection lost, adapter crash).
    #[error("harness error: {detail}")]
    Harness {
        /// What failed.
        detail: String,
    },

    /// An error of a lower layer (the database door, the schema install, the preflight, the
    /// embedded cluster, the adapter, the vectors crate), kept whole as the [`source`]
    /// (`std::error::Error::source`) so a program can inspect it; `kind` gives the heading
    /// of the message and the exit code. The message is the heading and the source's own.
    ///
    /// [`source`]: std::error::Error::source
    #[error("{}: {source}", kind.heading())]
    Caused {
        /// Which heading and exit code.
        kind: Kind,
        /// The typed error below.
        #[source]
        source: Source,
    },

    /// A requested report could not be written (the other reports still are).
    #[error("{option} {path}: the report was not written: {source}")]
    ReportNotWritten {
        /// The option (or keyword) that asked for it: `--junit`, `junit=`.
        option: &'static str,
        /// The file (`-` for stdout).
        path: PathBuf,
        /// The OS error (or, wrapped, why the report could not be rendered).
        source: std::io::Error,
    },

    /// Reading or writing a file the user named failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// `cannot write report`, `cannot read`, …
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// The typed error under an [`Error::Caused`].
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What kind of failure an [`Error::Caused`] is: its heading and its exit code, the same as
/// the text-only variant of that name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// As [`Error::Usage`] (exit 3).
    Usage,
    /// As [`Error::VectorsInvalid`] (exit 2).
    VectorsInvalid,
    /// As [`Error::Connect`] (exit 4).
    Connect,
    /// Database setup failed: embedded cluster, schema install, an environment that cannot
    /// host a run (exit 4).
    DatabaseSetup,
    /// The contract schema is missing or does not match the contract (exit 5).
    Schema,
    /// As [`Error::Harness`] (exit 6).
    Harness,
}

impl Kind {
    /// The start of the message, before the cause.
    #[must_use]
    pub fn heading(self) -> &'static str {
        match self {
            Kind::Usage => "usage",
            Kind::VectorsInvalid => "vector set invalid",
            Kind::Connect => "cannot connect to PostgreSQL",
            Kind::DatabaseSetup => "database setup failed",
            Kind::Schema => "contract schema missing or wrong",
            Kind::Harness => "harness error",
        }
    }

    /// The process exit code.
    #[must_use]
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Usage => exit::USAGE,
            Kind::VectorsInvalid => exit::VECTORS_INVALID,
            Kind::Connect | Kind::DatabaseSetup => exit::DATABASE_UNAVAILABLE,
            Kind::Schema => exit::SCHEMA_INVALID,
            Kind::Harness => exit::HARNESS,
        }
    }
}

impl Error {
    /// `source` as an error of `kind`, kept whole.
    pub fn caused(kind: Kind, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Caused {
            kind,
            source: Box::new(source),
        }
    }

    /// The process exit code for this error (see [`crate::exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Caused { kind, .. } => kind.exit_code(),
            Error::Usage(_) | Error::ExpectedFailures { .. } => exit::USAGE,
            Error::VectorsInvalid { .. } | Error::RegenerateMismatch { .. } => {
                exit::VECTORS_INVALID
            }
            Error::Connect { .. } => exit::DATABASE_UNAVAILABLE,
            Error::Harness { .. } | Error::Io { .. } | Error::ReportNotWritten { .. } => {
                exit::HARNESS
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pg::PgError;
    use std::error::Error as _;

    #[test]
    fn a_lower_error_is_kept_as_the_source_and_the_message_is_unchanged() {
        let e: Error = PgError::Db("connection closed".into()).into();
        assert_eq!(
            e.to_string(),
            "harness error: database error: connection closed"
        );
        assert_eq!(e.exit_code(), exit::HARNESS);
        let source = e.source().and_then(|s| s.downcast_ref::<PgError>());
        assert!(matches!(source, Some(PgError::Db(_))), "{e:?}");
        let e: Error = PgError::Tls("no such file".into()).into();
        assert_eq!(e.exit_code(), exit::DATABASE_UNAVAILABLE);
        assert!(e.to_string().starts_with("cannot connect to PostgreSQL: "));
    }
}
