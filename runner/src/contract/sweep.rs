//! Run-scoped rows and roles: the run id that names them, the sweep that removes what a run
//! committed (by run-scoped queue name, and by the run's login wherever a row landed: ADR
//! 0049), and the leftover sweep that removes what killed runs left behind, never what a live
//! run owns.
//!
//! A run holds a session-level advisory lock keyed by its run id ([`liveness_key`]) for its
//! whole life. Roles are cluster-wide but advisory locks are per database, so liveness is
//! read cluster-wide from `pg_locks` (which lists the locks of every database): a run whose
//! lock is held in any database of the cluster is alive, and its rows and login role are
//! left alone. Sweepers of one database also take the dead run's lock while they sweep, so
//! two of them never sweep the same run at once.

use crate::pg::SqlText;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use futures_util::future::try_join_all;
use tokio_postgres::Client;

use super::target::DbSetup;
use crate::pg::quote_ident;
use crate::pg::{Cached, PgError, Statements};

/// The longest the sweep waits for the run's own login sessions to leave `pg_stat_activity`
/// before it drops the login role, and in how many looks.
const ROLE_GONE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
const ROLE_GONE_POLLS: u32 = 50;

/// The advisory lock (two-int form) that marks run `run_id` as alive.
#[must_use]
pub fn liveness_key(run_id: &str) -> (i32, i32) {
    // "awac" and the low 32 bits of the run id (as the same bits in an i32).
    let low = u32::from_str_radix(
        run_id.get(run_id.len().saturating_sub(8)..).unwrap_or(""),
        16,
    )
    .unwrap_or(0);
    (0x6177_6163, i32::from_ne_bytes(low.to_ne_bytes()))
}

/// `pg_locks` shows the two-int key as unsigned oids.
fn as_oid(k: i32) -> i64 {
    i64::from(u32::from_ne_bytes(k.to_ne_bytes()))
}

/// Whether run `run_id` holds its liveness lock in any database of the cluster.
///
/// # Errors
/// [`PgError::Db`] when `pg_locks` cannot be read.
pub async fn alive_anywhere(client: &Client, run_id: &str) -> Result<bool, PgError> {
    let (k1, k2) = liveness_key(run_id);
    let row = client
        .query_one(
            include_str!("../../sql/liveness_held.sql"),
            &[&as_oid(k1), &as_oid(k2)],
        )
        .await
        .map_err(|e| PgError::Db(e.to_string()))?;
    Ok(row.get(0))
}

/// What [`mark_alive_and_sweep`] leaves the run: the session holding its liveness lock, the
/// transaction watermark of its start ([`DbSetup::began`]), and how the leftover sweep went.
pub struct Alive {
    /// The session holding the run's liveness lock for its whole life.
    pub live: tokio_postgres::Client,
    /// The first transaction id not yet assigned when the run began.
    pub began: i64,
    /// How many dead runs the leftover sweep removed, or why it failed.
    pub swept: Result<usize, PgError>,
}

/// Hold this run's liveness lock on a session of its own, read the run's start watermark
/// (before any statement of the run writes a row), then sweep what killed earlier runs left
/// behind (see [`sweep_leftovers`]).
pub async fn mark_alive_and_sweep(setup: &DbSetup) -> Result<Alive, PgError> {
    let err = |e: tokio_postgres::Error| PgError::Db(setup.pg.describe(&e));
    let live = setup.pg.connect().await?;
    let (k1, k2) = liveness_key(&setup.run_id);
    live.execute("SELECT pg_catalog.pg_advisory_lock($1, $2)", &[&k1, &k2])
        .await
        .map_err(err)?;
    let began: i64 = live
        .query_one(include_str!("../../sql/run_began.sql"), &[])
        .await
        .map_err(err)?
        .get(0);
    let swept = sweep_leftovers(&live, setup).await;
    Ok(Alive { live, began, swept })
}

/// Sweep what killed earlier runs left behind: rows of queues `awa_conformance_<id>_…` in
/// this schema and login roles `awa_conformance_<id>_login` without a session, for every
/// run id `<id>` whose liveness lock is held nowhere in the cluster. `live` is this run's
/// liveness session. Returns how many dead runs were swept.
async fn sweep_leftovers(live: &Client, db: &DbSetup) -> Result<usize, PgError> {
    let err = |e: tokio_postgres::Error| PgError::Db(db.pg.describe(&e));
    let mut ids: Vec<String> = Vec::new();
    for t in sweep_tables(live, db).await?.0.iter().filter(|t| t.queue) {
        let rows = live
            .query(
                &include_str!("../../sql/leftover_queue_runs.sql")
                    .fill(&[("S", db.schema.quoted()), ("T", &quote_ident(&t.name))]),
                &[],
            )
            .await
            .map_err(err)?;
        ids.extend(rows.iter().map(|r| r.get::<_, String>(0)));
    }
    let roles = live
        .query(include_str!("../../sql/leftover_role_runs.sql"), &[])
        .await
        .map_err(err)?;
    ids.extend(roles.iter().map(|r| r.get::<_, String>(0)));
    ids.sort();
    ids.dedup();
    let mut swept = 0;
    for id in ids.iter().filter(|id| **id != db.run_id) {
        if alive_anywhere(live, id).await? {
            continue;
        }
        let (k1, k2) = liveness_key(id);
        let free: bool = live
            .query_one(
                "SELECT pg_catalog.pg_try_advisory_lock($1, $2)",
                &[&k1, &k2],
            )
            .await
            .map_err(err)?
            .get(0);
        if !free {
            continue;
        }
        let scope = format!("awa_conformance_{id}_");
        let role = format!("awa_conformance_{id}_login");
        // The dead run's login wrote only that run's rows (ADR 0049), wherever they landed.
        let by_login = ByLogin {
            run_login: Some(&role),
            ..ByLogin::default()
        };
        let res = sweep_on(live, db, &scope, &[], by_login, Some(&role)).await;
        live.query_one("SELECT pg_catalog.pg_advisory_unlock($1, $2)", &[&k1, &k2])
            .await
            .map_err(err)?;
        res?;
        swept += 1;
    }
    Ok(swept)
}

/// A random 12-hex-digit id (std's randomly keyed SipHash; no extra dependency).
#[must_use]
pub fn run_id() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// Rows found by who wrote them, wherever they landed (ADR 0049), in the tables that record
/// the enqueuing login (`enqueued_by`, or `staged_by` of the staging table): every row of
/// `run_login`, a login only this run uses, and the rows of the `answered` job ids whose
/// login is `answer_login` (the login the producer was given). A row of any other login is
/// never found this way, even one written while the run was going on: the database may be
/// shared.
#[derive(Debug, Default, Clone, Copy)]
pub struct ByLogin<'a> {
    /// A run-scoped login: all its rows are the run's.
    pub run_login: Option<&'a str>,
    /// Job ids the producer answered.
    pub answered: &'a [i64],
    /// The login an answered job must have been enqueued by to be removed.
    pub answer_login: Option<&'a str>,
    /// The run's start watermark ([`DbSetup::began`]): an answered job is removed only when
    /// its row was written since, so a job that existed before the run stays whatever id a
    /// producer answers. `None`: no answered job is removed.
    pub created_since: Option<i64>,
}

impl ByLogin<'_> {
    fn is_empty(&self) -> bool {
        self.run_login.is_none() && (self.answered.is_empty() || self.answer_login.is_none())
    }
}

/// Remove committed rows of queues named `scope…` (and claims of their jobs plus
/// `extra_job_ids`) from every table of the schema; with `role`, also every row that login
/// wrote (ADR 0049), then drop that login role if it exists and has no session.
pub async fn sweep(
    db: &DbSetup,
    scope: &str,
    extra_job_ids: &[i64],
    role: Option<&str>,
) -> Result<(), PgError> {
    let client = db.pg.connect().await?;
    let by_login = ByLogin {
        run_login: role,
        ..ByLogin::default()
    };
    sweep_on(&client, db, scope, extra_job_ids, by_login, role).await
}

/// [`sweep`] on a given connection, with the rows `by_login` finds.
pub async fn sweep_on(
    client: &Client,
    db: &DbSetup,
    scope: &str,
    extra_job_ids: &[i64],
    by_login: ByLogin<'_>,
    role: Option<&str>,
) -> Result<(), PgError> {
    let statements = Statements::default();
    let conn = Cached::new(client, &statements);
    let tables = Tables::read(conn, db).await?;
    sweep_with(
        conn,
        db,
        &tables,
        &[scope.to_owned()],
        extra_job_ids,
        by_login,
        role,
    )
    .await
}

/// [`sweep_on`] with the schema's tables read already ([`Tables::read`]), for the queues
/// starting with any of `scopes` (one case's, or a batch of cases'). Each phase's
/// statements are independent of one another, so they go out pipelined (one round trip or
/// two per phase rather than per statement); the phases keep their order: ids are read
/// before anything is deleted, claims go before the job rows they may reference.
///
/// # Errors
/// [`PgError`] when a statement fails.
pub async fn sweep_with(
    conn: Cached<'_>,
    db: &DbSetup,
    tables: &Tables,
    scopes: &[String],
    extra_job_ids: &[i64],
    by_login: ByLogin<'_>,
    role: Option<&str>,
) -> Result<(), PgError> {
    let err = |e: tokio_postgres::Error| PgError::Db(db.pg.describe(&e));
    let client = conn.client;
    let tables = &tables.0;
    let s = db.schema.quoted();
    let prefix = scopes.to_vec();
    let mut ids: Vec<i64> = extra_job_ids.to_vec();
    // Jobs found by their login, outside the run's queues too: their ids first, so that
    // their claims go with them.
    let by_login_tables: Vec<&SweepTable> = if by_login.is_empty() {
        Vec::new()
    } else {
        tables.iter().filter(|t| t.login.is_some()).collect()
    };
    // Phase 1, reads: the job ids by login and by queue, and the sequences named by
    // run-scoped rows (released Awa creates one per queue lane: read before the rows go,
    // dropped after).
    let login_params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] = [
        &by_login.run_login,
        &by_login.answered,
        &by_login.answer_login,
        &by_login.created_since,
    ];
    let id_reads = by_login_tables
        .iter()
        .filter(|t| t.job_id || t.id)
        .map(|t| {
            include_str!("../../sql/sweep_login_ids.sql").fill(&[
                ("S", s),
                ("T", &quote_ident(&t.name)),
                ("ID", id_column(t)),
                ("L", &quote_ident(t.login.as_deref().unwrap_or_default())),
            ])
        })
        .collect::<Vec<_>>();
    let queue_reads = tables
        .iter()
        .filter(|t| t.queue && (t.job_id || t.id))
        .map(|t| {
            include_str!("../../sql/sweep_job_ids.sql").fill(&[
                ("S", s),
                ("T", &quote_ident(&t.name)),
                ("ID", id_column(t)),
            ])
        })
        .collect::<Vec<_>>();
    let sequence_reads = tables
        .iter()
        .filter(|t| t.queue && t.seq_name)
        .map(|t| {
            include_str!("../../sql/sweep_sequence_names.sql")
                .fill(&[("S", s), ("T", &quote_ident(&t.name))])
        })
        .collect::<Vec<_>>();
    let prefix_params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&prefix];
    let (by_login_ids, by_queue_ids, sequence_names) = futures_util::future::try_join3(
        try_join_all(id_reads.iter().map(|sql| conn.query(sql, &login_params))),
        try_join_all(
            queue_reads
                .iter()
                .map(|sql| conn.query(sql, &prefix_params)),
        ),
        try_join_all(
            sequence_reads
                .iter()
                .map(|sql| conn.query(sql, &prefix_params)),
        ),
    )
    .await
    .map_err(err)?;
    for rows in by_login_ids.iter().chain(&by_queue_ids) {
        ids.extend(rows.iter().map(|r| r.get::<_, i64>(0)));
    }
    let mut sequences: Vec<String> = sequence_names
        .iter()
        .flatten()
        .map(|r| r.get::<_, String>(0))
        .collect();
    // Phase 2: claim-like tables (job_id, no queue), in case they reference the job rows.
    if !ids.is_empty() {
        let claims = tables
            .iter()
            .filter(|t| !t.queue && t.job_id)
            .map(|t| {
                include_str!("../../sql/sweep_claims.sql")
                    .fill(&[("S", s), ("T", &quote_ident(&t.name))])
            })
            .collect::<Vec<_>>();
        let id_params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&ids];
        try_join_all(claims.iter().map(|sql| conn.execute(sql, &id_params)))
            .await
            .map_err(err)?;
    }
    // Phase 3: the rows, by login and by queue.
    let mut deletes: Vec<(String, bool)> = Vec::new();
    for t in &by_login_tables {
        let login = quote_ident(t.login.as_deref().unwrap_or_default());
        let table = quote_ident(&t.name);
        if t.job_id || t.id {
            let sql = include_str!("../../sql/sweep_login_rows.sql").fill(&[
                ("S", s),
                ("T", &table),
                ("ID", id_column(t)),
                ("L", &login),
            ]);
            deletes.push((sql, true));
        } else if by_login.run_login.is_some() {
            let sql = include_str!("../../sql/sweep_login_staged.sql").fill(&[
                ("S", s),
                ("T", &table),
                ("L", &login),
            ]);
            deletes.push((sql, false));
        }
    }
    let queue_deletes = tables
        .iter()
        .filter(|t| t.queue)
        .map(|t| {
            include_str!("../../sql/sweep_queue_rows.sql")
                .fill(&[("S", s), ("T", &quote_ident(&t.name))])
        })
        .collect::<Vec<_>>();
    let staged_params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&by_login.run_login];
    try_join_all(
        deletes
            .iter()
            .map(|(sql, by_id)| {
                let params: &[&(dyn tokio_postgres::types::ToSql + Sync)] = if *by_id {
                    &login_params
                } else {
                    &staged_params
                };
                conn.execute(sql.as_str(), params)
            })
            .chain(
                queue_deletes
                    .iter()
                    .map(|sql| conn.execute(sql.as_str(), &prefix_params)),
            ),
    )
    .await
    .map_err(err)?;
    sequences.sort();
    sequences.dedup();
    for name in &sequences {
        client
            .batch_execute(&format!(
                "DROP SEQUENCE IF EXISTS {s}.{}",
                quote_ident(name)
            ))
            .await
            .map_err(err)?;
    }
    let Some(role) = role else {
        return Ok(());
    };
    // The run's own login sessions were just closed (their pool dropped), but the server
    // removes a backend from pg_stat_activity a moment after its client goes: wait for that,
    // bounded (ROLE_GONE_WAIT); a session still there after it is another's, and the role
    // stays for the leftover sweep of a later run.
    let exists = client
        .query_opt(include_str!("../../sql/role_exists.sql"), &[&role])
        .await
        .map_err(err)?;
    if exists.is_none() {
        return Ok(());
    }
    let mut droppable = None;
    for _ in 0..ROLE_GONE_POLLS {
        droppable = client
            .query_opt(include_str!("../../sql/role_droppable.sql"), &[&role])
            .await
            .map_err(err)?;
        if droppable.is_some() {
            break;
        }
        tokio::time::sleep(ROLE_GONE_WAIT / ROLE_GONE_POLLS).await;
    }
    if droppable.is_some() {
        client
            .batch_execute(&format!("DROP ROLE IF EXISTS {}", quote_ident(role)))
            .await
            .map_err(err)?;
    }
    Ok(())
}

/// The number of rows of the schema's tables (those with a queue column) whose queue starts
/// with `prefix`.
pub async fn count_scope_rows(client: &Client, db: &DbSetup, prefix: &str) -> Result<i64, PgError> {
    let s = db.schema.quoted();
    let mut n = 0i64;
    for t in sweep_tables(client, db).await?.0.iter().filter(|t| t.queue) {
        let row = client
            .query_one(
                &include_str!("../../sql/scope_row_count.sql")
                    .fill(&[("S", s), ("T", &quote_ident(&t.name))]),
                &[&prefix],
            )
            .await
            .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
        n += row
            .try_get::<_, i64>(0)
            .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
    }
    Ok(n)
}

/// Where a check looks for the jobs it made ([`count_jobs`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct JobScope<'a> {
    /// Queues named exactly.
    pub queues: &'a [String],
    /// Queues starting with this run-scoped prefix.
    pub prefix: Option<&'a str>,
    /// Rows written by this login, wherever they landed (tables that record the login).
    pub login: Option<&'a str>,
}

/// The number of job rows in `scope`, on `client` (its transaction's view): rows of the
/// schema's tables that hold jobs, i.e. have a queue and a job id column (`id` or `job_id`)
/// and are not the bulk staging table (which records `staged_by`). `queue_meta` and the
/// unique claims are not jobs. The same tables the sweep removes jobs from, so what is
/// counted is what a case leaves behind.
///
/// # Errors
/// [`PgError::Db`] when the catalog or a count cannot be read.
pub async fn count_jobs(
    client: &Client,
    db: &DbSetup,
    scope: JobScope<'_>,
) -> Result<i64, PgError> {
    let statements = Statements::default();
    let conn = Cached::new(client, &statements);
    let tables = Tables::read(conn, db).await?;
    count_jobs_with(conn, db, &tables, scope).await
}

/// [`count_jobs`] with the schema's tables read already ([`Tables::read`]); the per-table
/// counts go out pipelined.
///
/// # Errors
/// [`PgError::Db`] when a count cannot be read.
pub async fn count_jobs_with(
    conn: Cached<'_>,
    db: &DbSetup,
    tables: &Tables,
    scope: JobScope<'_>,
) -> Result<i64, PgError> {
    let s = db.schema.quoted();
    let err = |e: tokio_postgres::Error| PgError::Db(db.pg.describe(&e));
    let counts = job_tables(tables)
        .map(|t| {
            include_str!("../../sql/job_rows.sql").fill(&[
                ("S", s),
                ("T", &quote_ident(&t.name)),
                ("L", &login_column(t)),
            ])
        })
        .collect::<Vec<_>>();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 3] =
        [&scope.queues, &scope.prefix, &scope.login];
    let rows = try_join_all(
        counts
            .iter()
            .map(|sql| conn.query_one(sql.as_str(), &params)),
    )
    .await
    .map_err(err)?;
    let mut n = 0i64;
    for row in &rows {
        n += row.try_get::<_, i64>(0).map_err(err)?;
    }
    Ok(n)
}

/// The job rows of a producer case run beside others (ADR 0057): `(own, strays)`. Its own
/// are the rows of its queues (named `prefix…`) and its `answered` ids written by `login`;
/// the strays are the rows `login` (the run's own) wrote outside every run-scoped queue
/// (`run_prefix…`) under an id not answered to it, which may be another case's. Without a
/// run login no stray can be told apart: 0. The same tables as [`count_jobs_with`].
///
/// # Errors
/// [`PgError::Db`] when a count cannot be read.
pub async fn count_split_with(
    conn: Cached<'_>,
    db: &DbSetup,
    tables: &Tables,
    prefix: &str,
    run_prefix: &str,
    login: Option<&str>,
    answered: &[i64],
) -> Result<(i64, i64), PgError> {
    let s = db.schema.quoted();
    let err = |e: tokio_postgres::Error| PgError::Db(db.pg.describe(&e));
    let counts = job_tables(tables)
        .map(|t| {
            include_str!("../../sql/job_rows_split.sql").fill(&[
                ("S", s),
                ("T", &quote_ident(&t.name)),
                ("L", &login_column(t)),
                ("ID", id_column(t)),
            ])
        })
        .collect::<Vec<_>>();
    let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
        [&prefix, &login, &run_prefix, &answered];
    let rows = try_join_all(
        counts
            .iter()
            .map(|sql| conn.query_one(sql.as_str(), &params)),
    )
    .await
    .map_err(err)?;
    let (mut own, mut strays) = (0i64, 0i64);
    for row in &rows {
        own += row.try_get::<_, i64>(0).map_err(err)?;
        strays += row.try_get::<_, i64>(1).map_err(err)?;
    }
    Ok((own, strays))
}

/// The tables that hold jobs: a queue and a job id column (`id` or `job_id`), not the bulk
/// staging table (which records `staged_by`).
fn job_tables(tables: &Tables) -> impl Iterator<Item = &SweepTable> {
    tables
        .0
        .iter()
        .filter(|t| t.queue && (t.id || t.job_id) && t.login.as_deref() != Some("staged_by"))
}

/// A table's login column, quoted, or `NULL::text` when it records none.
fn login_column(t: &SweepTable) -> String {
    t.login
        .as_deref()
        .map_or_else(|| "NULL::text".to_owned(), quote_ident)
}

/// The schema's tables as the sweep and the job count see them, read once
/// ([`Tables::read`]) for the statements of one case.
pub struct Tables(Vec<SweepTable>);

impl Tables {
    /// Read the schema's tables from the catalog.
    ///
    /// # Errors
    /// [`PgError::Db`] when the catalog cannot be read.
    pub async fn read(conn: Cached<'_>, db: &DbSetup) -> Result<Self, PgError> {
        let rows = conn
            .query(
                include_str!("../../sql/sweep_tables.sql"),
                &[&db.schema.as_str()],
            )
            .await
            .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
        Ok(Self::of(&rows))
    }

    fn of(rows: &[tokio_postgres::Row]) -> Self {
        Self(
            rows.iter()
                .map(|r| SweepTable {
                    name: r.get(0),
                    queue: r.get(1),
                    job_id: r.get(2),
                    id: r.get(3),
                    seq_name: r.get(4),
                    login: r.get(5),
                })
                .collect(),
        )
    }
}

/// The job id column of a table that has one (`job_id` first).
fn id_column(t: &SweepTable) -> &'static str {
    if t.job_id {
        "job_id"
    } else {
        "id"
    }
}

/// A base table of the schema and the columns a run-scoped row can be found by.
struct SweepTable {
    name: String,
    queue: bool,
    job_id: bool,
    id: bool,
    seq_name: bool,
    /// The column recording the enqueuing login (`enqueued_by`, `staged_by`), if any.
    login: Option<String>,
}

/// [`Tables::read`] on a connection without a statement cache of its own.
async fn sweep_tables(client: &Client, db: &DbSetup) -> Result<Tables, PgError> {
    Tables::read(Cached::new(client, &Statements::default()), db).await
}

impl DbSetup {
    /// How many committed rows of the schema's tables have a queue named `scope…` (a rejected
    /// bulk batch must leave none), on `client`.
    ///
    /// # Errors
    /// [`PgError`] when the count could not run.
    pub async fn count_scope_rows_on(
        &self,
        client: &tokio_postgres::Client,
        scope: &str,
    ) -> Result<i64, PgError> {
        count_scope_rows(client, self, scope).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_stable_and_shown_unsigned() {
        assert_eq!(liveness_key("0000ffffffff"), (0x6177_6163, -1));
        assert_eq!(as_oid(-1), 0xffff_ffff);
        assert_eq!(liveness_key("00000000002a").1, 42);
    }
}
