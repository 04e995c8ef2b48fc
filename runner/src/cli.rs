//! The command line: `run` (the default), `vectors verify|regenerate|list`,
//! `schema install|status|uninstall|print`, `completions <shell>` and `man`.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::FalseyValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::contract::server::ALLOW_UNTESTED_SERVER_ENV;
use crate::exit;
use crate::pg::SchemaName;

/// Conformance kit for Awa's SQL producer contract (`awa.insert_job(..., opts jsonb)`, v1).
///
/// Without a subcommand it runs the conformance suites: the offline vectors against the
/// reference core, and the SQL suite against a database (`--dsn`, `$DATABASE_URL`, the `PG*`
/// environment, or a throwaway cluster when PostgreSQL is installed locally).
#[derive(Debug, Parser)]
#[command(
    name = "awa-conformance",
    // `-V/--version` is our own flag: it prints the contract version and the vectors' root hash
    // too, which clap's static version string cannot know.
    disable_version_flag = true,
    args_conflicts_with_subcommands = true,
    subcommand_precedence_over_arg = true,
    help_template = "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}",
    after_help = exit::HELP_TABLE,
)]
pub struct Cli {
    /// What to do (default: run).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// Print the kit version, the contract version and the vectors' manifest root hash.
    #[arg(short = 'V', long)]
    pub version: bool,

    /// Options of the default `run` action.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing buys nothing"
)]
pub enum Command {
    /// Run the conformance suites (the default action).
    #[command(
        help_template = "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}",
        after_help = exit::HELP_TABLE
    )]
    Run(RunArgs),
    /// Inspect, verify or regenerate the frozen vector set.
    #[command(subcommand)]
    Vectors(VectorsCommand),
    /// Install, compare, uninstall or print the reference contract schema.
    #[command(subcommand)]
    Schema(SchemaCommand),
    /// Print a shell completion script to stdout (e.g. `awa-conformance completions bash >
    /// /etc/bash_completion.d/awa-conformance`).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout (e.g. `awa-conformance man > awa-conformance.1`).
    Man,
    /// Fuzz a database's contract functions or an adapter with random vectors from a seed;
    /// every disagreement is printed as a ready-to-add vector (docs/fuzz.md).
    Fuzz(Box<FuzzArgs>),
    /// Compare JSON reports side by side: a results page, a badge, a PR comment, the
    /// compatibility table (docs/ci.md, "Publishing results").
    #[command(subcommand)]
    Report(ReportCommand),
}

/// `report` subcommands. A report argument is `FILE` or `LABEL=FILE` (the label names the
/// implementation; without one it is taken from the report's provenance).
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Build one self-contained static page (DIR/index.html) comparing the reports: a matrix
    /// of implementations x families, each failing case with expected and actual, filters.
    /// Nothing is fetched: it works from file:// and any static host.
    #[command(after_help = exit::HELP_TABLE)]
    Html {
        /// The directory to write index.html into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// A kill matrix document to show under the results (docs/kill-matrix.md,
        /// docs/producer-kill-matrix.md); repeatable.
        #[arg(long, value_name = "FILE")]
        kill_matrix: Vec<PathBuf>,
        /// The JSON reports (--report-json), as FILE or LABEL=FILE.
        #[arg(value_name = "REPORT", required = true)]
        reports: Vec<String>,
    },
    /// Write an SVG badge and a shields.io endpoint JSON of one report into DIR
    /// (awa-conformance.svg, awa-conformance.json).
    #[command(after_help = exit::HELP_TABLE)]
    Badge {
        /// The directory to write into (created if missing).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The JSON report.
        #[arg(value_name = "REPORT")]
        report: String,
    },
    /// Markdown of what changed from OLD to NEW (newly failing, newly passing, no longer
    /// checked), for $GITHUB_STEP_SUMMARY or a PR comment; to stdout.
    #[command(after_help = exit::HELP_TABLE)]
    Diff {
        /// The earlier report.
        #[arg(value_name = "OLD")]
        old: String,
        /// The later report.
        #[arg(value_name = "NEW")]
        new: String,
    },
    /// The compatibility table (Markdown) of the reports, per feature and implementation;
    /// to stdout, or compared with FILE by --check (exit 1 when it differs).
    #[command(after_help = exit::HELP_TABLE)]
    Compatibility {
        /// Compare with this file instead of printing; exit 1 when it differs.
        #[arg(long, value_name = "FILE")]
        check: Option<PathBuf>,
        /// The JSON reports, as FILE or LABEL=FILE.
        #[arg(value_name = "REPORT", required = true)]
        reports: Vec<String>,
    },
}

/// Options of `run`: libtest's own options plus database, report and baseline options.
///
/// libtest flags that mean nothing here stay accepted (scripts written for libtest keep
/// working) but are hidden from `--help`.
#[derive(Debug, Args, Clone)]
#[command(
    mut_arg("include_ignored", |a| a.hide(true)),
    mut_arg("ignored", |a| a.hide(true)),
    mut_arg("test", |a| a.hide(true)),
    mut_arg("bench", |a| a.hide(true)),
    mut_arg("nocapture", |a| a.hide(true)),
    mut_arg("show_output", |a| a.hide(true)),
    mut_arg("unstable_flags", |a| a.hide(true)),
    mut_arg("logfile", |a| a.hide(true)),
)]
pub struct RunArgs {
    /// libtest-compatible options (filter, --exact, --list, --skip, --format, ...).
    #[command(flatten)]
    pub libtest: libtest_mimic::Arguments,

    /// The database, schema and producer role.
    #[command(flatten)]
    pub db: DbOptions,

    /// Never start a throwaway PostgreSQL cluster; without a DSN the SQL cases are ignored.
    #[arg(long, help_heading = "Database")]
    pub no_embedded: bool,

    /// The PostgreSQL server binaries (`initdb`, `pg_ctl`, `postgres`) for the throwaway
    /// cluster [default: `pg_config --bindir`, then /usr/lib/postgresql/<newest>/bin, then
    /// PATH].
    #[arg(
        long,
        value_name = "DIR",
        env = "AWA_PG_BIN",
        help_heading = "Database"
    )]
    pub pg_bin: Option<std::path::PathBuf>,

    /// Run on a PostgreSQL major newer than the newest the kit is tested on (18); the
    /// report records it. Servers older than 14 are refused regardless.
    #[arg(
        long,
        env = ALLOW_UNTESTED_SERVER_ENV,
        value_parser = FalseyValueParser::new(),
        help_heading = "Database"
    )]
    pub allow_untested_server: bool,

    /// Fail (exit 4) instead of showing selected SQL cases as ignored when there is no
    /// database; for CI, where a missing database must never pass.
    #[arg(
        long,
        env = "AWA_REQUIRE_DB",
        value_parser = FalseyValueParser::new(),
        help_heading = "Database"
    )]
    pub require_db: bool,

    /// Bound on one case, in seconds: a case still running after it is a harness error.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = DEFAULT_CASE_TIMEOUT_SECS,
        value_parser = seconds,
        help_heading = "Limits"
    )]
    pub case_timeout: u64,

    /// Bound on each wait for the adapter, in seconds: its hello, the silence between two
    /// answers, and its exit after `stop`.
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = DEFAULT_ADAPTER_TIMEOUT_SECS,
        value_parser = seconds,
        help_heading = "Limits"
    )]
    pub adapter_timeout: u64,

    /// Write a JSON report (format: runner/report.schema.json).
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "list",
        help_heading = "Reports"
    )]
    pub report_json: Option<PathBuf>,

    /// Write a JUnit XML report.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "list",
        help_heading = "Reports"
    )]
    pub junit: Option<PathBuf>,

    /// Write a Markdown summary (`-` = stdout); in GitHub Actions pass "$GITHUB_STEP_SUMMARY".
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "list",
        help_heading = "Reports"
    )]
    pub markdown: Option<PathBuf>,

    /// Tolerate the failures listed in FILE (each with a reason); a listed case that passes
    /// fails the run.
    #[arg(long, value_name = "FILE", help_heading = "Expected failures")]
    pub expected_failures: Option<PathBuf>,

    /// Write FILE listing this run's failures as expected failures (exit code unchanged).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "list",
        help_heading = "Expected failures"
    )]
    pub write_baseline: Option<PathBuf>,

    /// Check the vectors in PATH instead of the embedded releases: a release directory
    /// (vectors/v1 for exactly v1; vectors/v1.1 loads v1 too) or the vectors root.
    #[arg(long, value_name = "PATH", help_heading = "Vectors")]
    pub vectors_dir: Option<PathBuf>,

    /// Also check a producer's client-side functions through the adapter protocol: run CMD
    /// (a shell command) once and add one `adapter::<family>::<id>` case per vector
    /// (docs/adapter-protocol.md). With --dsn, CMD gets it in AWA_CONFORMANCE_DSN.
    #[arg(long, value_name = "CMD", help_heading = "Producers")]
    pub adapter: Option<String>,

    /// Also check what a producer really enqueues: run CMD (a shell command) speaking the
    /// producer protocol (docs/adapter-protocol.md, "Enqueue: producers") and add one
    /// `producer::<family>::<id>[::w<width>][::<step>]` case per vector, width and step; needs
    /// a database. CMD gets the DSN in AWA_CONFORMANCE_DSN and the schema in
    /// AWA_CONFORMANCE_SCHEMA; each enqueue is bounded by --adapter-timeout.
    #[arg(long, value_name = "CMD", help_heading = "Producers")]
    pub producer: Option<String>,

    /// The DSN given to the producer (AWA_CONFORMANCE_DSN); default: the run's temporary
    /// login role (a member of --producer-role only, needs CREATEROLE; ADR 0049), else the
    /// run's DSN.
    #[arg(
        long,
        value_name = "URL",
        requires = "producer",
        help_heading = "Producers"
    )]
    pub producer_dsn: Option<String>,

    /// Let the producer's sessions and the SQL suites' calls keep the server's defaults. By
    /// default both call the functions under test with TimeZone Asia/Kathmandu (UTC+05:45),
    /// DateStyle "SQL, DMY" and IntervalStyle iso_8601, so a stored job that depends on the
    /// caller's session fails (docs/contract.md §12.4); the report's provenance names them.
    #[arg(long)]
    pub plain_sessions: bool,

    /// Stop the run (exit 6, the rest not run) when the producer times out (--adapter-timeout)
    /// on this many requests in a row: a producer that hangs on every request would
    /// otherwise cost the timeout once per case.
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_MAX_CONSECUTIVE_TIMEOUTS,
        value_parser = clap::value_parser!(u32).range(1..),
        requires = "producer",
        help_heading = "Producers"
    )]
    pub max_consecutive_timeouts: u32,

    /// With --producer: instead of the producer cases, check the producer's protocol with
    /// canned requests (hello, two enqueues, one refusal, stop), as
    /// `producer::protocol::<step>`, without judging what it stores: a smoke test for people
    /// writing a producer. The run's other suites still run; the filter `producer::protocol`
    /// selects the exchange alone.
    #[arg(long, requires = "producer", help_heading = "Producers")]
    pub validate_producer: bool,

    /// With --producer: where the producer cases spent their time, per phase (set-up,
    /// reference, producer, read-back, judge, sweep), as a `timings` section of the JSON
    /// report and a table on stderr at the end. Tells a slow producer from a slow engine.
    #[arg(long, requires = "producer", help_heading = "Producers")]
    pub timings: bool,
}

/// Default of `--case-timeout`: far above any case's normal time (milliseconds), below the
/// patience of a CI job.
pub const DEFAULT_CASE_TIMEOUT_SECS: u64 = 60;
/// Default of `--adapter-timeout`: interpreters and JITs may start slowly.
pub const DEFAULT_ADAPTER_TIMEOUT_SECS: u64 = 30;
/// The longest duration any option accepts (one week). A bound is added to the clock
/// (`Instant + Duration`), which overflows, and panicked, for values near `u64::MAX`; a week
/// is beyond any real case, adapter or fuzzing budget and far from that overflow.
pub const MAX_DURATION_SECS: u64 = 7 * 24 * 60 * 60;

/// The value parser of every duration option (`--case-timeout`, `--adapter-timeout`, `fuzz
/// --seconds`): whole seconds from 1 to [`MAX_DURATION_SECS`]. clap puts the option's name
/// before the message, so the error names the option, the value and the range.
///
/// # Errors
/// The value is not a number, is 0, or is above the maximum.
pub fn seconds(text: &str) -> Result<u64, String> {
    let range = format!("give whole seconds from 1 to {MAX_DURATION_SECS} (one week)");
    match text.trim().parse::<u64>() {
        Err(e) => Err(format!("{e}; {range}")),
        Ok(0) => Err(format!("0 is no bound; {range}")),
        Ok(n) if n > MAX_DURATION_SECS => Err(format!("{n} is above the maximum; {range}")),
        Ok(n) => Ok(n),
    }
}

/// Default of `--max-consecutive-timeouts`.
pub const DEFAULT_MAX_CONSECUTIVE_TIMEOUTS: u32 = crate::producer::DEFAULT_MAX_CONSECUTIVE_TIMEOUTS;

impl RunArgs {
    /// `--case-timeout` as a duration.
    #[must_use]
    pub fn case_timeout(&self) -> Duration {
        Duration::from_secs(self.case_timeout)
    }

    /// `--adapter-timeout` as a duration.
    #[must_use]
    pub fn adapter_timeout(&self) -> Duration {
        Duration::from_secs(self.adapter_timeout)
    }

    /// `--producer` and its companions, typed for the producer engine; `None` without it.
    #[must_use]
    pub fn producer_launch(&self) -> Option<crate::producer::Launch> {
        Some(crate::producer::Launch {
            cmd: self.producer.clone()?,
            producer_dsn: self.producer_dsn.clone(),
            run_dsn: self.db.dsn.clone(),
            timeout: self.adapter_timeout(),
            max_consecutive_timeouts: self.max_consecutive_timeouts,
            validate: self.validate_producer,
        })
    }
}

/// Options of `fuzz`.
#[derive(Debug, Args, Clone)]
#[command(after_help = exit::HELP_TABLE)]
pub struct FuzzArgs {
    /// The database whose contract functions are fuzzed (the target unless --adapter is
    /// given; then it is handed to the adapter in AWA_CONFORMANCE_DSN), its schema and the
    /// producer role (the database check of --producer needs it).
    #[command(flatten)]
    pub db: DbOptions,

    /// Fuzz a producer's client-side functions through the adapter protocol instead: CMD (a
    /// shell command) is started once per batch (docs/adapter-protocol.md).
    #[arg(long, value_name = "CMD")]
    pub adapter: Option<String>,

    /// Fuzz a producer's enqueue path instead: CMD (a shell command) speaks the producer
    /// protocol and enqueues into the --dsn database; the producer engine judges what it
    /// stores (docs/adapter-protocol.md, "Enqueue: producers").
    #[arg(long, value_name = "CMD", conflicts_with = "adapter")]
    pub producer: Option<String>,

    /// The seed: the same seed gives the same cases in every version of the kit.
    #[arg(long, value_name = "N", required_unless_present = "replay")]
    pub seed: Option<u64>,

    /// Check this many cases (each case is one vector per family the target checks).
    #[arg(long, value_name = "N", conflicts_with_all = ["seconds", "replay"])]
    pub cases: Option<u64>,

    /// Check cases for this many seconds (the batch in flight finishes).
    #[arg(long, value_name = "S", conflicts_with = "replay", value_parser = seconds)]
    pub seconds: Option<u64>,

    /// The first case number (`--start K --cases 1` regenerates case K alone).
    #[arg(long, value_name = "K", default_value_t = 0, conflicts_with = "replay")]
    pub start: u64,

    /// Run the findings printed by an earlier fuzz run (FILE, `-` = stdin) against the
    /// target instead of generating cases.
    #[arg(long, value_name = "FILE", conflicts_with = "seed")]
    pub replay: Option<PathBuf>,

    /// Stop after this many disagreements.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_findings: u64,

    /// Bound on each wait for the adapter, in seconds (hello, silence between answers, exit).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = DEFAULT_ADAPTER_TIMEOUT_SECS,
        value_parser = seconds
    )]
    pub adapter_timeout: u64,

    /// Let the database's calls (each batch's transaction) and the producer's sessions keep
    /// the server's defaults. By default fuzz calls the functions under test with the same
    /// settings as a run (TimeZone Asia/Kathmandu, DateStyle "SQL, DMY", IntervalStyle
    /// iso_8601; docs/contract.md §12.4), and its header names them.
    #[arg(long, conflicts_with = "adapter")]
    pub plain_sessions: bool,
}

impl FuzzArgs {
    /// The options as the fuzzer takes them.
    #[must_use]
    pub fn options(&self) -> crate::fuzz::FuzzOptions {
        crate::fuzz::FuzzOptions {
            dsn: self.db.dsn.clone(),
            schema: self.db.names.schema.clone(),
            producer_role: self.db.names.producer_role.clone(),
            adapter: self.adapter.clone(),
            producer: self.producer.clone(),
            seed: self.seed,
            cases: self.cases,
            seconds: self.seconds,
            start: self.start,
            replay: self.replay.clone(),
            max_findings: self.max_findings,
            adapter_timeout: Duration::from_secs(self.adapter_timeout),
            plain_sessions: self.plain_sessions,
        }
    }
}

/// `vectors` subcommands.
#[derive(Debug, Subcommand)]
pub enum VectorsCommand {
    /// Check schema validity, manifest hashes, and that the core reproduces every vector.
    #[command(after_help = exit::HELP_TABLE)]
    Verify {
        /// Vectors to verify: a release directory or the vectors root (default: every embedded
        /// release).
        // `--dir` was this option's first name: kept, hidden, so scripts using it still work.
        #[arg(long = "vectors-dir", value_name = "PATH", alias = "dir")]
        dir: Option<PathBuf>,
    },
    /// Regenerate the vector files from the generator (writes into --vectors-dir).
    #[command(after_help = exit::HELP_TABLE)]
    Regenerate {
        /// Write nothing; exit 2 if any file differs from the generator output (freeze guard).
        #[arg(long)]
        check: bool,
        /// The vectors root holding one directory per release, v1/ and v1.1/ (default:
        /// ./vectors when writing; with --check and no --vectors-dir, the releases embedded in
        /// this binary, which was built from the committed files).
        #[arg(long = "vectors-dir", value_name = "PATH", alias = "dir")]
        dir: Option<PathBuf>,
    },
    /// List the vectors (every embedded release, corrected by the errata).
    List {
        /// Only this family (e.g. unique_key).
        #[arg(long, value_name = "FAMILY")]
        family: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
}

/// Output format of `vectors list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// One `family::id  status  description` line per vector.
    Text,
    /// A JSON array of {family, id, status, description, tags}.
    Json,
}

/// `schema` subcommands.
#[derive(Debug, Subcommand)]
pub enum SchemaCommand {
    /// Install the reference contract schema into a database. Refuses (exit 4), naming what
    /// differs, when the schema already holds a different implementation.
    #[command(after_help = exit::HELP_TABLE)]
    Install {
        /// Which database, schema and role.
        #[command(flatten)]
        target: DbOptions,
        /// Overwrite a different implementation found in the schema.
        #[arg(long)]
        force: bool,
    },
    /// Compare the installed schema with the reference: missing, same, different (exit 7),
    /// or released Awa (exit 7), with the first differing objects (changes nothing).
    #[command(after_help = exit::HELP_TABLE)]
    Status {
        /// Which database, schema and role.
        #[command(flatten)]
        target: DbOptions,
        /// List every differing object, not only the first 20.
        #[arg(long)]
        all: bool,
    },
    /// Remove exactly what `schema install` created (refuses if any of it was replaced).
    #[command(after_help = exit::HELP_TABLE)]
    Uninstall {
        /// Which database, schema and role.
        #[command(flatten)]
        target: DbOptions,
    },
    /// Print the reference contract schema SQL to stdout.
    Print {
        /// The schema and producer role the SQL names.
        #[command(flatten)]
        names: ContractNames,
    },
}

/// The contract's schema and producer role: the one declaration of `--schema` and
/// `--producer-role` (`run`, `fuzz`, every `schema` subcommand).
#[derive(Debug, Args, Clone)]
pub struct ContractNames {
    /// Schema holding the contract functions, exactly as stored (any case; it is quoted in
    /// the SQL).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "awa",
        help_heading = "Database"
    )]
    pub schema: SchemaName,

    /// Producer role the least-privilege cases run as (created by `schema install`, granted
    /// EXECUTE on insert_job).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "awa_producer",
        help_heading = "Database"
    )]
    pub producer_role: String,
}

/// The database under test: the one declaration of `--dsn`, with [`ContractNames`].
#[derive(Debug, Args, Clone)]
pub struct DbOptions {
    /// PostgreSQL to use, as a postgres:// URL or key=value string [default: $DATABASE_URL,
    /// then the PG* environment].
    #[arg(long, value_name = "URL", help_heading = "Database")]
    pub dsn: Option<String>,

    /// The schema and producer role.
    #[command(flatten)]
    pub names: ContractNames,
}

/// `argv` with the options written before a subcommand moved after it (and after its own
/// subcommand): `--dsn URL schema status` means `schema status --dsn URL`.
///
/// The options of the default `run` action sit at the top level, where clap sees them as
/// conflicting with any subcommand ("cannot be used with"), although `--dsn`, `--schema`
/// and `--producer-role` mean the same to `schema status`. Moved, they apply to the
/// subcommand when it has them; when it has not (`--junit x schema status`), clap names the
/// option the subcommand does not take. Nothing moves unless the words before the subcommand
/// are all options of the command line and their values (so a filter is never reinterpreted),
/// or when `-h`/`--help`/`-V`/`--version` is among them (those stay top-level flags).
#[must_use]
pub fn global_options_after_subcommand(argv: &[String]) -> Vec<String> {
    use clap::CommandFactory;
    let top = Cli::command();
    let mut i = 1;
    while let Some(word) = argv.get(i) {
        let arg = if let Some(long) = word.strip_prefix("--") {
            let (name, inline) = long
                .split_once('=')
                .map_or((long, false), |(n, _)| (n, true));
            top.get_arguments()
                .find(|a| a.get_long() == Some(name))
                .map(|a| (a, inline))
        } else if let Some(short) = word.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            top.get_arguments()
                .find(|a| a.get_short().map(String::from).as_deref() == Some(short))
                .map(|a| (a, false))
        } else {
            break;
        };
        let Some((arg, inline)) = arg else {
            return argv.to_vec();
        };
        if ["help", "version"].contains(&arg.get_id().as_str()) || word == "-h" || word == "--help"
        {
            return argv.to_vec();
        }
        i += if arg.get_action().takes_values() && !inline {
            2
        } else {
            1
        };
    }
    if i == 1 {
        return argv.to_vec();
    }
    let Some(mut sub) = argv.get(i).and_then(|w| top.find_subcommand(w)) else {
        return argv.to_vec();
    };
    let mut end = i + 1;
    while let Some(nested) = argv.get(end).and_then(|w| sub.find_subcommand(w)) {
        sub = nested;
        end += 1;
    }
    let (program, rest) = argv.split_at(1);
    let (options, rest) = rest.split_at(i - 1);
    let (path, rest) = rest.split_at(end - i);
    [program, path, options, rest].concat()
}

impl Cli {
    /// The run options, whether given as `run ...` or without a subcommand.
    pub fn into_action(self) -> Action {
        if self.version {
            return Action::Version;
        }
        match self.command {
            None => Action::Run(self.run),
            Some(Command::Run(args)) => Action::Run(args),
            Some(Command::Vectors(cmd)) => Action::Vectors(cmd),
            Some(Command::Schema(cmd)) => Action::Schema(cmd),
            Some(Command::Completions { shell }) => Action::Completions(shell),
            Some(Command::Man) => Action::Man,
            Some(Command::Fuzz(args)) => Action::Fuzz(args),
            Some(Command::Report(cmd)) => Action::Report(cmd),
        }
    }
}

/// What `main` dispatches on.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "built once per process; boxing buys nothing"
)]
pub enum Action {
    /// Run the suites.
    Run(RunArgs),
    /// A `vectors` subcommand.
    Vectors(VectorsCommand),
    /// A `schema` subcommand.
    Schema(SchemaCommand),
    /// `-V` / `--version`.
    Version,
    /// Print shell completions.
    Completions(clap_complete::Shell),
    /// Print the man page.
    Man,
    /// `fuzz`.
    Fuzz(Box<FuzzArgs>),
    /// A `report` subcommand.
    Report(ReportCommand),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn default_action_is_run_with_filter() {
        let cli = Cli::try_parse_from(["awa-conformance", "--exact", "unique_key::uk-1"]).unwrap();
        let Action::Run(args) = cli.into_action() else {
            panic!("not run")
        };
        assert!(args.libtest.exact);
        assert_eq!(args.libtest.filter.as_deref(), Some("unique_key::uk-1"));
    }

    fn moved(words: &[&str]) -> Vec<String> {
        let argv: Vec<String> = std::iter::once("awa-conformance")
            .chain(words.iter().copied())
            .map(str::to_owned)
            .collect();
        global_options_after_subcommand(&argv)
            .into_iter()
            .skip(1)
            .collect()
    }

    #[test]
    fn options_before_a_subcommand_move_after_it() {
        assert_eq!(
            moved(&[
                "--dsn",
                "u",
                "--schema=s",
                "schema",
                "status",
                "--producer-role",
                "r"
            ]),
            [
                "schema",
                "status",
                "--dsn",
                "u",
                "--schema=s",
                "--producer-role",
                "r"
            ]
        );
        assert_eq!(
            moved(&["--dsn", "u", "run", "x"]),
            ["run", "--dsn", "u", "x"]
        );
        let cli = Cli::try_parse_from(
            std::iter::once("awa-conformance".to_owned())
                .chain(moved(&["--dsn", "u", "--schema", "s", "schema", "status"])),
        )
        .unwrap();
        let Action::Schema(SchemaCommand::Status { target, .. }) = cli.into_action() else {
            panic!("not schema status")
        };
        assert_eq!(target.dsn.as_deref(), Some("u"));
        assert_eq!(target.names.schema.as_str(), "s");
        // A filter, a value that only looks like a subcommand, and help stay where they are.
        for words in [
            &["--exact", "unique_key::uk-1"][..],
            &["unique_key", "schema"],
            &["--schema", "status"],
            &["--help", "schema"],
            &["-V", "schema"],
            &["schema", "status", "--dsn", "u"],
        ] {
            assert_eq!(moved(words), words, "{words:?}");
        }
    }

    #[test]
    fn durations_are_bounded() {
        assert_eq!(seconds("60"), Ok(60));
        assert_eq!(
            seconds(&MAX_DURATION_SECS.to_string()),
            Ok(MAX_DURATION_SECS)
        );
        for bad in [
            "0",
            "604801",
            "18446744073709551615",
            "18446744073709551616",
            "x",
        ] {
            let err = seconds(bad).unwrap_err();
            assert!(err.contains("from 1 to 604800"), "{bad}: {err}");
        }
    }

    #[test]
    fn reports_conflict_with_list() {
        assert!(Cli::try_parse_from(["awa-conformance", "--list", "--junit", "x.xml"]).is_err());
    }
}
