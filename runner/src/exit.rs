//! The process exit codes of `awa-conformance`: documented constants, one meaning each.
//!
//! `main` maps every outcome to exactly one of these (libtest-mimic's own failure code 101 is
//! translated to [`NONCONFORMANT`]). When several apply, the highest-priority wins:
//! vector-set (2) and usage (3) problems stop the run before any case runs; database (4)
//! and schema (5) problems stop it before the DB cases run; a harness error (6) outranks a
//! nonconformance (1) because the results are then incomplete.

/// Every selected case passed (expected failures that still fail are fine).
pub const SUCCESS: u8 = 0;
/// The implementation is nonconformant: a case failed, or an expected failure passed.
pub const NONCONFORMANT: u8 = 1;
/// The vector set is invalid or tampered with: schema violation, manifest hash mismatch,
/// unparsable file, or `vectors regenerate --check` found a difference.
pub const VECTORS_INVALID: u8 = 2;
/// Usage error: bad command line (clap's own usage errors are mapped here from its 2), or a
/// bad expected-failures file (unreadable, not JSON, wrong version, an entry without
/// `id`/`reason`, an ID that names no trial).
pub const USAGE: u8 = 3;
/// Cannot connect to PostgreSQL, database setup (embedded cluster, schema install) failed, or
/// the database cannot host a run (read-only, missing privileges, too few connections).
pub const DATABASE_UNAVAILABLE: u8 = 4;
/// The contract schema is missing or wrong: no `insert_job`, wrong signature, or a
/// contract version this kit does not test.
pub const SCHEMA_INVALID: u8 = 5;
/// Harness error: connection lost mid-run, adapter crashed, a report could not be written.
pub const HARNESS: u8 = 6;

/// The exit-code table shown at the end of `--help`.
pub const HELP_TABLE: &str = "\
Exit codes:
  0  all selected cases passed (listed expected failures may still fail)
  1  nonconformant: a case failed, or a listed expected failure passed
  2  vector set invalid or tampered (schema, manifest hash, parse, regenerate --check)
  3  usage error: bad arguments or a bad expected-failures file
  4  cannot connect to PostgreSQL, database setup failed, or the database cannot
     host a run (read-only, missing privileges, too few connections)
  5  contract schema missing or wrong (insert_job, signature, contract version)
  6  harness error (connection lost mid-run, adapter crashed, report not written)";
