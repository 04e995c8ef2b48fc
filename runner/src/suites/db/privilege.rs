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

use awa_conformance_vectors::VectorSet;
use serde_json::json;
use tokio_postgres::Client;

use super::case::{query_fail, rolled_back_on, Case};
use super::function::{capability, check_case, fn_cases};
use crate::contract::login::{producer, queue_base, Producer};
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::quote_ident;

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
        .checks(crate::contract::features::Feature::of_vector(family, false).as_slice())
        .requires(capability(family))
        .requires("job_routing")
    }));
    out
}
