//! Typed errors of the runner, each mapped to one exit code by [`Error::exit_code`].
//!
//! Every message is one line that names the file, vector ID or option at fault and the fix.
//! Messages never contain a DSN password: callers pass DSNs through
//! [`crate::report::redact::redact_secrets`] before putting them in an error.

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

    /// Database setup failed (embedded cluster, schema install).
    #[error("database setup failed: {detail}")]
    DatabaseSetup {
        /// What failed and the fix.
        detail: String,
    },

    /// The contract schema is missing or does not match contract v1.
    #[error("contract schema missing or wrong: {detail}")]
    Schema {
        /// What is missing / wrong and the fix.
        detail: String,
    },

    /// The harness itself failed (connection lost, adapter crash).
    #[error("harness error: {detail}")]
    Harness {
        /// What failed.
        detail: String,
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

impl Error {
    /// The process exit code for this error (see [`crate::exit`]).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::ExpectedFailures { .. } => exit::USAGE,
            Error::VectorsInvalid { .. } | Error::RegenerateMismatch { .. } => {
                exit::VECTORS_INVALID
            }
            Error::Connect { .. } | Error::DatabaseSetup { .. } => exit::DATABASE_UNAVAILABLE,
            Error::Schema { .. } => exit::SCHEMA_INVALID,
            Error::Harness { .. } | Error::Io { .. } => exit::HARNESS,
        }
    }
}
