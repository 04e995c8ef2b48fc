//! The process exit codes of `awa-conformance`: documented constants, one meaning each.
//!
//! `main` maps every outcome to exactly one of these (libtest-mimic's own failure code 101 is
//! translated to [`NONCONFORMANT`]). When several apply, the highest-priority wins:
//! vector-set (2) and usage (3) problems stop the run before any case runs; database (4)
//! and schema (5) problems stop it before the DB cases run; a harness error (6) outranks a
//! nonconformance (1) because the results are then incomplete. A run stopped early (signal,
//! closed stdout) outranks everything: it exits 130, 141 or 143, the numbers a shell reports
//! for a process ended by SIGINT, SIGPIPE or SIGTERM, after cleaning up and writing the
//! reports with verdict `interrupted` (ADR 0030).

/// Every selected case passed (expected failures that still fail are fine).
pub const SUCCESS: u8 = 0;
/// The implementation is nonconformant: a case failed, or an expected failure passed.
pub const NONCONFORMANT: u8 = 1;
/// The vector set is invalid or tampered with: schema violation, manifest hash mismatch,
/// unparsable file, or `vectors regenerate --check` found a difference.
pub const VECTORS_INVALID: u8 = 2;
/// Usage error: bad command line (clap's own usage errors are mapped here from its 2), a
/// bad expected-failures file (unreadable, not JSON, wrong version, an entry without
/// `id`/`reason`, an ID that names no trial), a report path that cannot be written or that
/// names the same file as another report (checked before any case runs), a filter that
/// selects no case, or a selection whose every case turned out not applicable (nothing was
/// checked).
pub const USAGE: u8 = 3;
/// Cannot connect to PostgreSQL, database setup (embedded cluster, schema install) failed, the
/// database cannot host a run (read-only, missing privileges, too few connections), or there
/// is no database while `--require-db` / `AWA_REQUIRE_DB=1` asks for one or every selected
/// case needs one.
pub const DATABASE_UNAVAILABLE: u8 = 4;
/// The contract schema is missing or wrong: no `insert_job`, wrong signature, or a
/// contract version this kit does not test; also released Awa older than the compat profile
/// checks (no `insert_job_compat`: before 0.5.5), in one line naming its version.
pub const SCHEMA_INVALID: u8 = 5;
/// Harness error: connection lost mid-run, adapter crashed, a report could not be written
/// (the other reports still are, and the JSON report, written last, says 6).
pub const HARNESS: u8 = 6;
/// `schema status` only: the schema holds something other than the reference (a different
/// implementation, a partial install, or released Awa). Not a failure of the command: it is
/// the answer, as `diff` exits 1, and distinct from 1 so a script never reads it as a
/// nonconformance (ADR 0050). `same` and `missing` exit 0.
pub const SCHEMA_DIFFERS: u8 = 7;

/// The run was stopped by SIGINT (Ctrl-C): cases in flight finished, the rest did not run,
/// the database was cleaned up and every requested report says `interrupted`.
pub const INTERRUPTED: u8 = 130;
/// stdout was closed while the run was printing (`awa-conformance | head -1`): the run
/// stopped as for [`INTERRUPTED`]. Listing commands (`--list`, `vectors list`) end with 0.
pub const STDOUT_CLOSED: u8 = 141;
/// The run was stopped by SIGTERM; handled as [`INTERRUPTED`].
pub const TERMINATED: u8 = 143;

/// The exit-code table shown at the end of `--help`.
pub const HELP_TABLE: &str = "\
Exit codes:
    0  all selected cases passed (listed expected failures may still fail)
    1  nonconformant: a case failed, or a listed expected failure passed
    2  vector set invalid or tampered (schema, manifest hash, parse, regenerate --check)
    3  usage error: bad arguments, a bad expected-failures file, a report path
         that cannot be written or names another report's file, or a filter
         that selects nothing / a selection that checks nothing
    4  cannot connect to PostgreSQL, database setup failed, or no database
         while one is required (--require-db, AWA_REQUIRE_DB=1) or needed
    5  contract schema missing or wrong (insert_job, signature, contract version)
    6  harness error (connection lost mid-run, adapter crashed or hung, report not written)
    7  schema status: the schema differs from the reference (another implementation,
         a partial install, or released Awa); same and missing exit 0
  130  interrupted by SIGINT (cleaned up; reports say \"interrupted\")
  141  stdout closed mid-run, e.g. `| head` (cleaned up; reports say \"interrupted\")
  143  terminated by SIGTERM (cleaned up; reports say \"interrupted\")";
