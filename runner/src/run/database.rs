//! Step 2 of a run: find or start the database, and preflight the contract schema and the
//! environment; or say why there is none (the SQL cases are then ignored, never passed).

use std::sync::Arc;

use crate::cli::RunArgs;
use crate::contract::target as db;
use crate::embedded::{EmbeddedCluster, EmbeddedError};
use crate::error::{Error, Kind};
use crate::outcome::{RunContext, PROVENANCE_DATABASE};
use crate::pg::{Dsn, Pg};

use super::plan::Plan;
use super::warn;

/// A database the DB suites can use, or why there is none.
pub(super) struct Database {
    pub(super) setup: Option<Arc<db::DbSetup>>,
    /// Kept alive for the run; dropping it stops and removes the throwaway cluster.
    cluster: Option<EmbeddedCluster>,
    /// Why the SQL cases are ignored (when `setup` is `None`).
    pub(super) reason: String,
}

impl Database {
    pub(super) fn none(reason: String) -> Self {
        Self {
            setup: None,
            cluster: None,
            reason,
        }
    }

    /// Remove everything the run created (rows, login role), then the throwaway cluster.
    pub(super) fn close(self) {
        if let Some(setup) = &self.setup {
            // Leftover run-scoped rows are untidy but say nothing about conformance: warn only.
            if let Err(e) = setup.cleanup() {
                warn(&format!(
                    "cleanup after the SQL suites failed: {e}; rows of queues named \
                     awa_conformance_{}_* may remain (the next run removes them)",
                    setup.run_id
                ));
            }
        }
        drop(self.cluster);
    }
}

/// The reason every SQL case shows when no database is available, with how to get one.
pub(super) fn no_database(why: &str) -> String {
    format!(
        "no database ({why}): pass --dsn URL (or set DATABASE_URL / PGHOST...), or install \
         PostgreSQL so a throwaway cluster can be started"
    )
}

/// "No database" as it ends a run: the SQL cases are ignored, unless a database is required.
fn without_database(ctx: &RunContext, args: &RunArgs, why: &str) -> Result<Database, Error> {
    ctx.set_provenance(PROVENANCE_DATABASE, "none".to_owned());
    if args.require_db {
        return Err(Error::Connect {
            detail: format!(
                "no database ({why}) and one is required (--require-db or AWA_REQUIRE_DB=1): \
                 pass --dsn URL (or set DATABASE_URL / PGHOST...)"
            ),
        });
    }
    Ok(Database::none(no_database(why)))
}

/// Open the database the plan needs (step 2): none when no SQL case is selected.
pub(super) fn open(plan: &Plan, args: &RunArgs) -> Result<Database, Error> {
    if plan.db_selected {
        open_database(&plan.ctx, args)
    } else {
        Ok(Database::none(no_database("no SQL case selected")))
    }
}

pub(super) use crate::contract::target::CALLERS_PROVENANCE;

/// Find or start the database and preflight the contract schema.
fn open_database(ctx: &Arc<RunContext>, args: &RunArgs) -> Result<Database, Error> {
    let dsn = Dsn::resolve(args.db.dsn.as_deref())?;
    let (dsn, cluster) = match dsn {
        Some(dsn) => {
            ctx.set_provenance(
                PROVENANCE_DATABASE,
                format!("dsn ({})", dsn.source().as_str()),
            );
            (dsn, None)
        }
        None if args.no_embedded => {
            return without_database(ctx, args, "no DSN given and --no-embedded");
        }
        None => match EmbeddedCluster::start_default(args.pg_bin.as_deref()) {
            Ok(cluster) => {
                crate::schema_install::install(
                    cluster.dsn(),
                    &args.db.names.schema,
                    &args.db.names.producer_role,
                    false,
                )?;
                ctx.set_provenance(PROVENANCE_DATABASE, cluster.describe());
                // Said every time: a green run here is about the kit itself, and a new user
                // who meant to check a database must not read it as that database's verdict.
                super::note(
                    "awa-conformance: no DSN given: checking the kit's own reference schema on a \
                     throwaway cluster it started (a verdict about the kit, not about your \
                     database or producer); pass --dsn URL to check yours\n",
                );
                (cluster.dsn().clone(), Some(cluster))
            }
            Err(e @ (EmbeddedError::NoBinaries | EmbeddedError::RootWithoutPostgresUser)) => {
                return without_database(ctx, args, &e.to_string());
            }
            Err(e @ EmbeddedError::NotBinaries(_)) => return Err(Error::caused(Kind::Usage, e)),
            Err(e) => return Err(Error::caused(Kind::DatabaseSetup, e)),
        },
    };
    // Ctrl-C is handled by the run (crate::interrupt): it cleans up, then drops the cluster.
    let pg = Pg::new(dsn)?;
    let setup = crate::contract::open::preflight(
        ctx,
        pg,
        &args.db.names.schema,
        &args.db.names.producer_role,
        args.libtest.test_threads,
        args.producer.is_some(),
        args.allow_untested_server,
    )?;
    setup
        .plain_sessions
        .store(args.plain_sessions, std::sync::atomic::Ordering::SeqCst);
    ctx.set_provenance(CALLERS_PROVENANCE, setup.caller_settings_provenance());
    Ok(Database {
        setup: Some(setup),
        cluster,
        reason: String::new(),
    })
}
