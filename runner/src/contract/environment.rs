//! Environment preflight: can this database host a run at all? One line per problem, before
//! any case runs, instead of hundreds of failed cases: a read-only database (hot standby or
//! `default_transaction_read_only`), a database encoding other than UTF8, privileges the
//! runner's role lacks (each named), and
//! too few connection slots for the run (the number it needs is [`connections_needed`]);
//! and first of all, a PostgreSQL major the kit does not support ([`super::server`]).
//!
//! Timeouts need no check here: every session sets its own `statement_timeout`,
//! `lock_timeout` and idle timeouts at startup ([`crate::pg`]), so a role's or database's
//! settings cannot cut a run short.

use std::sync::Arc;

use crate::pg::{quote_ident, Pg, PgError, SchemaName};

/// The most connections one run opens at once with `test_threads` trial threads: a pooled
/// connection per thread for the runner's role and as many for the temporary login role (both
/// pools stay open), the race suite's racers plus its sweep, the liveness session, the
/// least-privilege set-up session and the final cleanup; with a producer, also
/// [`PRODUCER_SESSIONS`].
#[must_use]
pub fn connections_needed(test_threads: usize, producer: bool) -> usize {
    2 * test_threads + RACERS + 4 + if producer { PRODUCER_SESSIONS } else { 0 }
}

/// The sessions the race suite (`sql::race::*`) runs at once, each its own connection.
pub const RACERS: usize = 3;

/// What checking a producer adds: the engine's own session (reference calls, read-back) and
/// the producer's. A producer that opens more than one session needs that many more slots.
pub const PRODUCER_SESSIONS: usize = 2;

/// The trial threads libtest-mimic uses for `--test-threads` (its own default: the CPUs).
#[must_use]
pub fn test_threads(requested: Option<usize>) -> usize {
    requested
        .filter(|n| *n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(usize::from))
        .unwrap_or(1)
}

/// Why the database cannot host a run (exit 4, one line).
#[derive(Debug, thiserror::Error)]
pub enum EnvironmentError {
    /// Connecting or reading the catalog failed.
    #[error(transparent)]
    Pg(#[from] PgError),
    /// The database is read-only.
    #[error("{0}")]
    ReadOnly(String),
    /// The database's encoding is not UTF8 (ADR 0060).
    #[error("{0}")]
    Encoding(String),
    /// The runner's role lacks privileges.
    #[error("{0}")]
    Privileges(String),
    /// Not enough connection slots.
    #[error("{0}")]
    Connections(String),
    /// A PostgreSQL major the kit does not support (or has not been tested on).
    #[error(transparent)]
    Server(#[from] super::server::ServerError),
}

/// Check the database behind `pg` (see the module docs).
///
/// # Errors
/// The first problem found, as one line naming the fix.
pub async fn check(
    pg: &Arc<Pg>,
    schema: &SchemaName,
    producer_role: &str,
    test_threads: usize,
    producer: bool,
    allow_untested: bool,
) -> Result<super::server::Support, EnvironmentError> {
    let client = pg.connect().await?;
    let q = |e: tokio_postgres::Error| {
        EnvironmentError::Pg(PgError::Db(format!(
            "environment preflight query failed: {}",
            pg.describe(&e)
        )))
    };
    let where_ = pg.dsn().redacted();
    let row = client
        .query_one(include_str!("../../sql/env_state.sql"), &[])
        .await
        .map_err(q)?;
    let (standby, read_only, version, superuser): (bool, bool, i32, bool) =
        (row.get(0), row.get(1), row.get(2), row.get(3));
    let encoding: String = row.get(4);
    // First: on a server the kit does not support, every other answer could be wrong.
    let support = super::server::support(version, allow_untested)?;
    require_utf8(&encoding, &where_)?;
    if standby {
        return Err(EnvironmentError::ReadOnly(format!(
            "{where_} is a hot standby (read-only): the SQL suites write rows (and remove them \
             again); point --dsn at the primary"
        )));
    }
    if read_only {
        return Err(EnvironmentError::ReadOnly(format!(
            "{where_} is read-only (default_transaction_read_only = on for the role, database \
             or server): the SQL suites write rows (and remove them again); use a writable \
             database, or RESET default_transaction_read_only for it"
        )));
    }
    // Released Awa runs the compat profile, which creates no login role (ADR 0044).
    let needs_role = super::released::detect(&client, schema.as_str())
        .await
        .map_err(q)?
        .is_none();
    let missing: Vec<String> = client
        .query(
            include_str!("../../sql/env_missing_privileges.sql"),
            &[&schema.as_str(), &producer_role, &version, &needs_role],
        )
        .await
        .map_err(q)?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !missing.is_empty() {
        return Err(EnvironmentError::Privileges(format!(
            "role {} lacks privileges the SQL suites need on {where_}: {}; grant them, or run \
             as the owner of schema {}",
            quote_ident(pg.dsn().user()),
            missing.join("; "),
            schema.quoted()
        )));
    }
    // The least-privilege suite's login and a producer's are never superusers.
    let limits = connection_limits(&client, pg, superuser, producer || needs_role)
        .await
        .map_err(q)?;
    let need = connections_needed(test_threads, producer);
    let short: Vec<String> = limits
        .into_iter()
        .filter(|(free, _)| usize::try_from(*free).map_or(true, |f| f < need))
        .map(|(_, why)| why)
        .collect();
    if !short.is_empty() {
        return Err(EnvironmentError::Connections(format!(
            "too few connections on {where_}: a run with {test_threads} test threads{} needs \
             up to {need} at once (2 x threads + {}), but {}; raise the limit, close sessions, \
             or pass --test-threads N (README, \"What a run needs from the database\")",
            if producer { " and a producer" } else { "" },
            need - 2 * test_threads,
            short.join(", and ")
        )));
    }
    if producer && needs_role {
        let owner = client
            .query_opt(
                include_str!("../../sql/env_producer_reader.sql"),
                &[&schema.as_str()],
            )
            .await
            .map_err(q)?;
        if let Some(owner) = owner {
            let owner: String = owner.get(0);
            return Err(EnvironmentError::Privileges(format!(
                "role {} is not a member of {}, the owner of {}.job_routing, so it would read \
                 every job a producer stores as missing and blame the producer; run as that \
                 owner (the role that ran `schema install`), or GRANT {} TO {}",
                quote_ident(pg.dsn().user()),
                quote_ident(&owner),
                schema.quoted(),
                quote_ident(&owner),
                quote_ident(pg.dsn().user())
            )));
        }
    }
    Ok(support)
}

/// The contract's values (kinds, args, tags, metadata) are Unicode: a database in another
/// encoding cannot store some of them and would fail those cases as its own fault, so the
/// kit checks UTF8 databases only and refuses any other in one line (ADR 0060). `where_` is
/// the redacted DSN.
///
/// # Errors
/// [`EnvironmentError::Encoding`] naming the encoding and the fix.
pub fn require_utf8(encoding: &str, where_: &str) -> Result<(), EnvironmentError> {
    if encoding == "UTF8" {
        return Ok(());
    }
    Err(EnvironmentError::Encoding(format!(
        "{where_} has server encoding {encoding}: the contract's jobs carry Unicode text \
         (kinds, args, tags, metadata) that only a UTF8 database stores whole, so the kit \
         checks UTF8 databases only; run against a database created with ENCODING 'UTF8' \
         (createdb -E UTF8 -T template0)"
    )))
}

/// The connection limits that apply to the run's sessions, each as (free slots, the sentence
/// a refusal shows). A superuser runner is exempt from the reserved slots, its role's and the
/// database's limits, but the other logins of a run are not (the least-privilege suite's
/// temporary role, a producer's login): with `other_logins`, the reserved slots and the
/// database's limit count whoever the runner is, and every session of the run counts
/// against them (the server counts a superuser's sessions toward a database's limit too).
async fn connection_limits(
    client: &tokio_postgres::Client,
    pg: &Pg,
    superuser: bool,
    other_logins: bool,
) -> Result<Vec<(i32, String)>, tokio_postgres::Error> {
    let exempt = superuser && !other_logins;
    let row = client
        .query_one(include_str!("../../sql/env_connections.sql"), &[])
        .await?;
    let (max, reserved, used): (i32, i32, i32) = (row.get(0), row.get(1), row.get(2));
    let (role_limit, role_used, db_limit, db_used): (i32, i32, i32, i32) =
        (row.get(3), row.get(4), row.get(5), row.get(6));
    let server_free = max - if exempt { 0 } else { reserved } - used;
    let mut limits = vec![(
        server_free,
        format!(
            "the server allows {server_free} more (max_connections {max}{}, {used} in use)",
            if exempt {
                String::new()
            } else {
                format!(", {reserved} reserved")
            }
        ),
    )];
    if !superuser && role_limit >= 0 {
        limits.push((
            role_limit - role_used,
            format!(
                "role {} allows {} more (CONNECTION LIMIT {role_limit}, {role_used} in use)",
                quote_ident(pg.dsn().user()),
                role_limit - role_used
            ),
        ));
    }
    if !exempt && db_limit >= 0 {
        limits.push((
            db_limit - db_used,
            format!(
                "the database allows {} more (CONNECTION LIMIT {db_limit}, {db_used} in use)",
                db_limit - db_used
            ),
        ));
    }
    Ok(limits)
}

/// The sessions a producer run may still open on the server behind `pg`: the fewest free
/// slots of the limits the preflight checks ([`connection_limits`], with the producer's
/// login counted). A producer declaring `max_in_flight` is given no more lanes than fit
/// (ADR 0057).
///
/// # Errors
/// [`PgError`] when the catalog cannot be read.
pub async fn free_slots(pg: &Pg) -> Result<i64, PgError> {
    let client = pg.connect().await?;
    let q = |e: tokio_postgres::Error| PgError::Db(pg.describe(&e));
    let superuser: bool = client
        .query_one(include_str!("../../sql/env_state.sql"), &[])
        .await
        .map_err(q)?
        .get(3);
    let limits = connection_limits(&client, pg, superuser, true)
        .await
        .map_err(q)?;
    Ok(limits
        .iter()
        .map(|(free, _)| i64::from(*free))
        .min()
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn need_grows_with_threads() {
        assert_eq!(
            connections_needed(1, false) + 2,
            connections_needed(2, false)
        );
        assert_eq!(
            connections_needed(2, false) + PRODUCER_SESSIONS,
            connections_needed(2, true)
        );
        assert_eq!(test_threads(Some(3)), 3);
        assert!(test_threads(None) >= 1);
        assert!(test_threads(Some(0)) >= 1);
    }
}
