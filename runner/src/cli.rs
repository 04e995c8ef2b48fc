//! The command line: `run` (the default), `vectors verify|regenerate|list`, `schema install|print`,
//! `completions <shell>` and `man`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::exit;

/// Conformance kit for Awa's SQL producer contract (`awa.insert_job(..., opts jsonb)`, v1).
///
/// Without a subcommand it runs the conformance suites: the offline vectors against the
/// reference core, and the SQL suite against a database (`--dsn`, `$DATABASE_URL`, the `PG*`
/// environment, or a throwaway cluster when PostgreSQL is installed locally).
#[derive(Debug, Parser)]
#[command(
    name = "awa-conformance",
    version,
    args_conflicts_with_subcommands = true,
    subcommand_precedence_over_arg = true,
    help_template = "{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}",
    after_help = exit::HELP_TABLE,
)]
pub struct Cli {
    /// What to do (default: run).
    #[command(subcommand)]
    pub command: Option<Command>,

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
    /// Install or print the reference contract schema.
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
}

/// Options of `run`: libtest's own options plus database, report and baseline options.
#[derive(Debug, Args, Clone)]
pub struct RunArgs {
    /// libtest-compatible options (filter, --exact, --list, --skip, --format, ...).
    #[command(flatten)]
    pub libtest: libtest_mimic::Arguments,

    /// PostgreSQL to test, as a postgres:// URL or key=value string [default: $DATABASE_URL,
    /// then the PG* environment].
    #[arg(long, value_name = "URL", help_heading = "Database")]
    pub dsn: Option<String>,

    /// Schema holding the contract functions.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "awa",
        help_heading = "Database"
    )]
    pub schema: String,

    /// Producer role the least-privilege cases run as (created by `schema install`).
    #[arg(
        long,
        value_name = "NAME",
        default_value = "awa_producer",
        help_heading = "Database"
    )]
    pub producer_role: String,

    /// Never start a throwaway PostgreSQL cluster; without a DSN the SQL cases are ignored.
    #[arg(long, help_heading = "Database")]
    pub no_embedded: bool,

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

    /// Check the vector set in PATH (a vectors/v1 directory) instead of the embedded one.
    #[arg(long, value_name = "PATH", help_heading = "Vectors")]
    pub vectors_dir: Option<PathBuf>,

    /// Also check a producer's client-side functions through the adapter protocol: run CMD
    /// (a shell command) once and add one `adapter::<family>::<id>` case per vector
    /// (docs/adapter-protocol.md). With --dsn, CMD gets it in AWA_CONFORMANCE_DSN.
    #[arg(long, value_name = "CMD", help_heading = "Producers")]
    pub adapter: Option<String>,
}

/// `vectors` subcommands.
#[derive(Debug, Subcommand)]
pub enum VectorsCommand {
    /// Check schema validity, manifest hashes, and that the core reproduces every vector.
    #[command(after_help = exit::HELP_TABLE)]
    Verify {
        /// Vector directory to verify (default: the embedded set).
        #[arg(long, value_name = "PATH")]
        dir: Option<PathBuf>,
    },
    /// Regenerate the vector files from the generator (writes into --dir).
    #[command(after_help = exit::HELP_TABLE)]
    Regenerate {
        /// Write nothing; exit 2 if any file differs from the generator output (freeze guard).
        #[arg(long)]
        check: bool,
        /// Vector directory (default: ./vectors/v1 when writing; with --check and no --dir, the
        /// set embedded in this binary, which was built from the committed files).
        #[arg(long, value_name = "PATH")]
        dir: Option<PathBuf>,
    },
    /// List the vectors (embedded set).
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
    /// Install the reference contract schema into a database.
    #[command(after_help = exit::HELP_TABLE)]
    Install {
        /// PostgreSQL to install into [default: $DATABASE_URL, then the PG* environment].
        #[arg(long, value_name = "URL")]
        dsn: Option<String>,
        /// Schema name.
        #[arg(long, value_name = "NAME", default_value = "awa")]
        schema: String,
        /// Producer role to create and grant EXECUTE on insert_job.
        #[arg(long, value_name = "NAME", default_value = "awa_producer")]
        producer_role: String,
    },
    /// Print the reference contract schema SQL to stdout.
    Print {
        /// Schema name.
        #[arg(long, value_name = "NAME", default_value = "awa")]
        schema: String,
        /// Producer role name.
        #[arg(long, value_name = "NAME", default_value = "awa_producer")]
        producer_role: String,
    },
}

impl Cli {
    /// The run options, whether given as `run ...` or without a subcommand.
    pub fn into_action(self) -> Action {
        match self.command {
            None => Action::Run(self.run),
            Some(Command::Run(args)) => Action::Run(args),
            Some(Command::Vectors(cmd)) => Action::Vectors(cmd),
            Some(Command::Schema(cmd)) => Action::Schema(cmd),
            Some(Command::Completions { shell }) => Action::Completions(shell),
            Some(Command::Man) => Action::Man,
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
    /// Print shell completions.
    Completions(clap_complete::Shell),
    /// Print the man page.
    Man,
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

    #[test]
    fn reports_conflict_with_list() {
        assert!(Cli::try_parse_from(["awa-conformance", "--list", "--junit", "x.xml"]).is_err());
    }
}
