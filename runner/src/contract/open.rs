//! Opening the database under test: the one way every engine gets a [`DbSetup`]: the
//! environment check, the catalog preflight, the liveness lock and the sweep of killed runs'
//! leftovers, and the provenance a run records of what it found.
//!
//! The top of the database part of the contract layer: it uses every module below it
//! ([`environment`], [`catalog`], [`sweep`], [`levels`]), and none of them uses it.

use std::sync::Arc;

use super::preflight as catalog;
use super::target::{DbSetup, PreflightError};
use super::{environment, levels, server, sweep};
use crate::outcome::{
    RunContext, PROVENANCE_CONTRACT_VERSION, PROVENANCE_LEVEL, PROVENANCE_SERVER_VERSION,
};
use crate::pg::{Pg, SchemaName};

/// Connect and check the contract schema: the schema exists, exactly one
/// `<schema>.insert_job` with the v1 signature (last argument `p_opts jsonb`), `job_routing`,
/// `contract_version() = 1` and `contract_capabilities()`. Records server and contract
/// versions as provenance.
///
/// Before that, [`environment::check`] makes sure the database can host a run at all,
/// on a PostgreSQL major the kit supports ([`server`]; `allow_untested` admits a newer
/// major than CI tests, recorded in the provenance).
///
/// # Errors
/// [`PreflightError::Unreachable`], [`PreflightError::Environment`] or
/// [`PreflightError::Schema`] with one clear line.
pub fn preflight(
    ctx: &Arc<RunContext>,
    pg: Arc<Pg>,
    schema: &SchemaName,
    producer_role: &str,
    test_threads: Option<usize>,
    producer: bool,
    allow_untested: bool,
) -> Result<Arc<DbSetup>, PreflightError> {
    let threads = environment::test_threads(test_threads);
    let support = pg
        .block_on(environment::check(
            &pg,
            schema,
            producer_role,
            threads,
            producer,
            allow_untested,
        ))?
        .map_err(|e| match e {
            environment::EnvironmentError::Pg(p) => PreflightError::Unreachable(p),
            other => PreflightError::Environment(other),
        })?;
    if let server::Support::Untested(why) = support {
        ctx.set_provenance(server::PROVENANCE_UNTESTED, why);
    }
    let mut setup = pg.block_on(catalog::preflight(&pg, schema, producer_role))??;
    let alive = pg.block_on(sweep::mark_alive_and_sweep(&setup))??;
    setup.liveness = Some(alive.live);
    setup.began = alive.began;
    if let Err(e) = alive.swept {
        // Leftovers of earlier runs are untidy but say nothing about conformance: warn only.
        use std::io::Write;
        let e = crate::redact::for_terminal(&e.to_string());
        let _ = writeln!(
            std::io::stderr(),
            "awa-conformance: warning: sweeping leftovers of earlier killed runs failed: {e}"
        );
    }
    ctx.set_provenance(PROVENANCE_SERVER_VERSION, setup.server_version.clone());
    if let Some(released) = &setup.compat {
        ctx.set_provenance(
            PROVENANCE_CONTRACT_VERSION,
            format!("none ({})", released.name()),
        );
        ctx.set_provenance(PROVENANCE_LEVEL, "compat".to_owned());
        ctx.set_provenance("released_awa", released.describe());
    } else {
        ctx.set_provenance(
            PROVENANCE_CONTRACT_VERSION,
            setup.contract_version.to_string(),
        );
        ctx.set_provenance(PROVENANCE_LEVEL, levels::level(&setup.capabilities));
    }
    Ok(Arc::new(setup))
}
