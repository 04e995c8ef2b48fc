//! `sql::privilege::*`: ADR-043 least privilege, checked two ways.
//!
//! * `no_excess_privileges` reads the catalog: the producer role holds no privilege on any
//!   table, view or sequence of the schema, no CREATE on the schema, and EXECUTE on no
//!   function except `insert_job`, `job_routing`, `queue_enqueue_shards` and the functions schema/README.md
//!   documents as public (the catalog functions and the pure, non-SECURITY-DEFINER helpers).
//! * A temporary LOGIN role `awa_conformance_<run id>_login` that holds only the producer
//!   role (needs CREATEROLE or superuser; otherwise not applicable) runs the WHOLE function
//!   suite (`sql::privilege::function::<vector id>`, each case rolled back) on queues whose
//!   widths the runner committed beforehand, and `producer_role_only` checks that it cannot
//!   read any table of the schema.
//!
//! The role and the committed queue widths are created once, by the first case that needs
//! them, and removed by [`super::DbSetup::cleanup`] (and by the next run's leftovers sweep
//! if this process is killed).

use std::sync::Arc;

use awa_conformance_core::MAX_WIDTH;
use awa_conformance_vectors::VectorSet;
use serde_json::json;
use tokio_postgres::Client;

use super::case::{harness, query_fail, rolled_back_on, setup_fail, Case};
use super::function::{capability, check_case, fn_cases};
use super::sweep::run_id;
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::quote_ident;
use crate::pg::Pg;

/// Functions a producer may EXECUTE besides `insert_job` and `job_routing`: the catalog and
/// the pure helpers schema/README.md documents as public (only when not SECURITY DEFINER).
const DOCUMENTED_PUBLIC: [&str; 10] = [
    "contract_capabilities",
    "contract_version",
    "concurrency_digest",
    "concurrency_shard",
    "move_shard",
    "ordering_key_hash64",
    "ordering_key_hash64_i64",
    "ordering_shard",
    "raise_invalid_width",
    "unique_states_bits",
];

/// The run's temporary login role.
pub(super) fn role_name(db: &DbSetup) -> String {
    format!("{}_login", db.prefix())
}

/// The base name of the queues whose widths are committed for the login role.
fn queue_base(db: &DbSetup) -> String {
    format!("{}_priv", db.prefix())
}

/// The shared login-role connection door, created once per run.
#[derive(Debug, Clone)]
pub(crate) enum Producer {
    /// Logged in as the temporary role (a pool of its own), and its password (for a
    /// producer's DSN, ADR 0049; never printed).
    Ready(Arc<Pg>, Arc<str>),
    /// The role cannot be created or cannot log in here (not applicable, with the reason).
    NotApplicable(String),
    /// The setup itself failed (harness error).
    Broken(String),
}

/// Setup as the runner's role; `Ok(Err(reason))` = not applicable.
async fn create_role(
    admin: &Client,
    db: &DbSetup,
    password: &str,
) -> Result<Result<(), String>, CaseFailure> {
    let row = admin
        .query_one(
            include_str!("../../../sql/role_attributes.sql"),
            &[&db.producer_role],
        )
        .await
        .map_err(|e| setup_fail(db, "reading role attributes", &e))?;
    let (can_create, producer_exists): (bool, bool) = (row.get(0), row.get(1));
    if !can_create {
        return Ok(Err(format!(
            "the runner's role {} lacks CREATEROLE, so it cannot create a temporary login role; \
             rerun with a role that has CREATEROLE to check least privilege",
            db.pg.dsn().user()
        )));
    }
    if !producer_exists {
        return Ok(Err(format!(
            "producer role {} does not exist (see sql::catalog::producer_role_grants)",
            quote_ident(&db.producer_role)
        )));
    }
    let role = quote_ident(&role_name(db));
    // The password is random per run and passed as a literal (DDL takes no parameters);
    // it is hex, so it needs no escaping.
    let sql = format!(
        "CREATE ROLE {role} LOGIN INHERIT PASSWORD '{password}'; GRANT {} TO {role}",
        quote_ident(&db.producer_role)
    );
    if let Err(e) = admin.batch_execute(&sql).await {
        if e.code().map(|c| c.code()) == Some("42501") {
            return Ok(Err(format!(
                "cannot create or grant the temporary role: {}",
                db.pg.describe(&e)
            )));
        }
        return Err(setup_fail(db, "creating the temporary login role", &e));
    }
    Ok(Ok(()))
}

/// Create the role and commit the queue widths (run once, see [`producer`]); returns the
/// role's DSN and password, or `Err(reason)` when not applicable.
async fn set_up(db: &DbSetup) -> Result<Result<(crate::pg::Dsn, String), String>, CaseFailure> {
    let admin = db.pg.connect().await.map_err(harness)?;
    // Hex of two random ids: no quoting issues, never printed.
    let password = format!("{}{}", run_id(), run_id());
    if let Err(reason) = create_role(&admin, db, &password).await? {
        return Ok(Err(reason));
    }
    let widths: Vec<i16> = (1..=i16::from(MAX_WIDTH)).collect();
    admin
        .execute(
            &include_str!("../../../sql/set_widths.sql").replace("@S@", db.schema.quoted()),
            &[&queue_base(db), &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "committing queue widths", &e))?;
    Ok(Ok((
        db.pg.dsn().with_user(&role_name(db), &password),
        password,
    )))
}

/// Log in once as the role (proves pg_hba.conf lets it in); the connection is pooled.
fn log_in(dsn: crate::pg::Dsn, password: String) -> Producer {
    let pg = match Pg::new(dsn) {
        Ok(pg) => pg,
        Err(e) => return Producer::Broken(e.to_string()),
    };
    let login = pg.block_on(async {
        let mut pooled = pg.pooled().await?;
        pooled.mark_clean();
        Ok::<_, crate::pg::PgError>(())
    });
    match login {
        Ok(Ok(())) => Producer::Ready(pg, password.into()),
        Ok(Err(e)) | Err(e) => Producer::NotApplicable(format!(
            "cannot log in as the temporary role (pg_hba.conf may not allow it): {e}"
        )),
    }
}

/// The run's login-role door, set up by the first caller.
pub(super) fn producer(db: &DbSetup) -> Producer {
    let Ok(mut slot) = db.producer.lock() else {
        return Producer::Broken("the login-role state was poisoned by a panic".to_owned());
    };
    if let Some(p) = slot.as_ref() {
        return p.clone();
    }
    let made = match db.pg.block_on(set_up(db)) {
        Ok(Ok(Ok((dsn, password)))) => log_in(dsn, password),
        Ok(Ok(Err(reason))) => Producer::NotApplicable(reason),
        Ok(Err(f)) => Producer::Broken(f.message),
        Err(e) => Producer::Broken(e.to_string()),
    };
    *slot = Some(made.clone());
    made
}

/// Run `f` on a pooled login-role connection inside a transaction that is rolled back.
fn as_login<T>(
    db: &DbSetup,
    f: impl AsyncFnOnce(&Client) -> Result<T, CaseFailure>,
) -> Result<Result<T, CaseFailure>, Verdict> {
    let pg = match producer(db) {
        Producer::Ready(pg, _) => pg,
        Producer::NotApplicable(reason) => return Err(Verdict::NotApplicable(reason)),
        Producer::Broken(msg) => return Ok(Err(CaseFailure::harness(msg))),
    };
    Ok(rolled_back_on(&pg, db, f))
}

/// `producer_role_only`: the login role reads no table of the schema.
async fn no_table_readable(client: &Client, db: &DbSetup) -> Result<(), CaseFailure> {
    let tables: Vec<String> = client
        .query(
            include_str!("../../../sql/schema_tables.sql"),
            &[&db.schema.as_str()],
        )
        .await
        .map_err(|e| query_fail(db, "listing the schema's tables", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut readable = Vec::new();
    for t in &tables {
        client
            .batch_execute("SAVEPOINT r")
            .await
            .map_err(|e| query_fail(db, "SAVEPOINT", &e))?;
        let sql = format!(
            "SELECT 1 FROM {}.{} LIMIT 0",
            db.schema.quoted(),
            quote_ident(t)
        );
        match client.query(&sql, &[]).await {
            Ok(_) => readable.push(t.clone()),
            Err(e) if e.code().map(|c| c.code()) == Some("42501") => {}
            Err(e) => return Err(query_fail(db, &format!("SELECT from {t}"), &e)),
        }
        client
            .batch_execute("ROLLBACK TO SAVEPOINT r")
            .await
            .map_err(|e| query_fail(db, "ROLLBACK TO SAVEPOINT", &e))?;
    }
    if tables.is_empty() || !readable.is_empty() {
        return Err(CaseFailure::mismatch(
            "a login role holding only the producer role must not SELECT any table of the schema",
            json!({"readable_tables": [], "tables_checked": "at least the job table"}),
            json!({"readable_tables": readable, "tables_checked": tables}),
        ));
    }
    Ok(())
}

/// `no_excess_privileges`: every privilege the producer role holds beyond the contract's.
async fn excess_privileges(client: &Client, db: &DbSetup) -> Result<Verdict, CaseFailure> {
    let exists = client
        .query_opt(
            include_str!("../../../sql/role_exists.sql"),
            &[&db.producer_role],
        )
        .await
        .map_err(|e| query_fail(db, "pg_roles", &e))?;
    if exists.is_none() {
        return Ok(Verdict::NotApplicable(format!(
            "producer role {} does not exist (see sql::catalog::producer_role_grants)",
            quote_ident(&db.producer_role)
        )));
    }
    let allowed: Vec<String> = DOCUMENTED_PUBLIC.iter().map(|s| (*s).to_owned()).collect();
    let rows = client
        .query(
            include_str!("../../../sql/producer_excess_privileges.sql"),
            &[&db.producer_role, &db.schema.as_str(), &allowed],
        )
        .await
        .map_err(|e| query_fail(db, "reading the producer role's privileges", &e))?;
    let excess: Vec<String> = rows.iter().map(|r| r.get::<_, String>(0)).collect();
    if excess.is_empty() {
        return Ok(Verdict::Passed);
    }
    Err(CaseFailure::mismatch(
        format!(
            "producer role {} holds privileges beyond EXECUTE on insert_job and job_routing \
             (ADR-043): revoke them",
            quote_ident(&db.producer_role)
        ),
        json!({"excess_privileges": []}),
        json!({"excess_privileges": excess}),
    ))
}

fn verdict(r: Result<Result<(), CaseFailure>, Verdict>) -> Result<Verdict, CaseFailure> {
    match r {
        Err(v) => Ok(v),
        Ok(inner) => inner.map(|()| Verdict::Passed),
    }
}

/// The `sql::privilege::*` cases.
pub(super) fn cases(vectors: &VectorSet) -> Vec<Case> {
    let mut out = vec![
        Case::new("privilege", "no_excess_privileges", |db| {
            super::case::rolled_back(&db, async |c| excess_privileges(c, &db).await)
        }),
        Case::new("privilege", "producer_role_only", |db| {
            verdict(as_login(&db, async |c| no_table_readable(c, &db).await))
        }),
    ];
    out.extend(fn_cases(vectors).into_iter().map(|(family, id, case)| {
        Case::new("privilege", &format!("function::{id}"), move |db| {
            let base = queue_base(&db);
            verdict(as_login(&db, async |c| {
                check_case(
                    c,
                    &db,
                    &format!("{id} as the producer role"),
                    &case,
                    Some(&base),
                )
                .await
            }))
        })
        .requires(capability(family))
        .requires("job_routing")
    }));
    out
}
