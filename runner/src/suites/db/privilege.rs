//! `sql::privilege::*`: a login role holding only the producer role can enqueue through the
//! contract functions and cannot read any table of the schema (ADR-043 least privilege).
//!
//! The case creates a temporary LOGIN role `awa_conformance_<run id>_login` (needs
//! CREATEROLE or superuser; otherwise not applicable), grants it the producer role, commits
//! queue widths for a sample of routing vectors, connects as the role and runs them in a
//! rolled-back transaction, then tries to SELECT from every table of the schema. The role
//! and the committed rows are removed afterwards, pass or fail.

use std::sync::Arc;

use awa_conformance_core::MAX_WIDTH;
use awa_conformance_vectors::{Case as VCase, VectorSet};
use serde_json::json;
use tokio_postgres::Client;

use super::support::{
    harness, insert_and_read_all, query_fail, run_id, setup_fail, sweep, width_queue, Case, Expect,
    Req,
};
use super::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::Pg;
use crate::schema_install::quote_ident;

/// How many routing_precedence vectors the sampled function run covers.
const SAMPLE: usize = 16;

/// The run's temporary login role.
pub(super) fn role_name(db: &DbSetup) -> String {
    format!("{}_login", db.prefix())
}

fn queue_base(db: &DbSetup) -> String {
    format!("{}_priv", db.prefix())
}

struct Sample {
    id: String,
    ordering_key: Option<Vec<u8>>,
    concurrency_key: Option<Vec<u8>>,
    expect: Expect,
}

fn sample(vectors: &VectorSet) -> Vec<Sample> {
    vectors
        .iter()
        .filter_map(|(_, v)| match &v.case {
            VCase::RoutingPrecedence(c) => Some(Sample {
                id: v.id.clone(),
                ordering_key: c.ordering_key.clone(),
                concurrency_key: c.concurrency_key.clone(),
                expect: Expect {
                    width: c.width,
                    route_source: c.route_source.as_str(),
                    enqueue_shard: c.enqueue_shard,
                    concurrency_digest: c.concurrency_digest,
                },
            }),
            _ => None,
        })
        .take(SAMPLE)
        .collect()
}

/// Setup as the runner's role; `Ok(Err(reason))` = not applicable.
async fn create_role(
    admin: &Client,
    db: &DbSetup,
    password: &str,
) -> Result<Result<(), String>, CaseFailure> {
    let row = admin
        .query_one(
            "SELECT r.rolsuper OR r.rolcreaterole, \
                    EXISTS (SELECT 1 FROM pg_roles p WHERE p.rolname = $1) \
             FROM pg_roles r WHERE r.rolname = current_user",
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

async fn as_producer(
    db: &Arc<DbSetup>,
    vectors: &[Sample],
    password: &str,
) -> Result<Verdict, CaseFailure> {
    let dsn = db.pg.dsn().with_user(&role_name(db), password);
    let client = match Pg::connect_with(&dsn).await {
        Ok(c) => c,
        Err(e) => {
            return Ok(Verdict::NotApplicable(format!(
                "cannot log in as the temporary role (pg_hba.conf may not allow it): {e}"
            )))
        }
    };
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| query_fail(db, "BEGIN", &e))?;
    let base = queue_base(db);
    let reqs: Vec<Req> = vectors
        .iter()
        .map(|v| {
            Req::on(&width_queue(&base, v.expect.width))
                .keys(v.ordering_key.as_deref(), v.concurrency_key.as_deref())
        })
        .collect();
    let outcome = insert_and_read_all(&client, db, &reqs).await;
    client
        .batch_execute("ROLLBACK")
        .await
        .map_err(|e| query_fail(db, "ROLLBACK", &e))?;
    for (v, (ins, stored)) in vectors.iter().zip(outcome?) {
        v.expect
            .check(&format!("{} as the producer role", v.id), &ins, &stored)?;
    }
    // No table of the schema may be readable.
    let tables: Vec<String> = client
        .query(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm') ORDER BY 1",
            &[&db.schema],
        )
        .await
        .map_err(|e| query_fail(db, "listing the schema's tables", &e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut readable = Vec::new();
    for t in &tables {
        let sql = format!("SELECT 1 FROM {}.{} LIMIT 0", db.s(), quote_ident(t));
        match client.query(&sql, &[]).await {
            Ok(_) => readable.push(t.clone()),
            Err(e) if e.code().map(|c| c.code()) == Some("42501") => {}
            Err(e) => return Err(query_fail(db, &format!("SELECT from {t}"), &e)),
        }
    }
    if tables.is_empty() || !readable.is_empty() {
        return Err(CaseFailure::mismatch(
            "a login role holding only the producer role must not SELECT any table of the schema",
            json!({"readable_tables": [], "tables_checked": "at least the job table"}),
            json!({"readable_tables": readable, "tables_checked": tables}),
        ));
    }
    Ok(Verdict::Passed)
}

async fn run(db: &Arc<DbSetup>, vectors: &[Sample]) -> Result<Verdict, CaseFailure> {
    let admin = db.pg.connect().await.map_err(harness)?;
    // Hex of two random ids: no quoting issues, never printed.
    let password = format!("{}{}", run_id(), run_id());
    if let Err(reason) = create_role(&admin, db, &password).await? {
        return Ok(Verdict::NotApplicable(reason));
    }
    let widths: Vec<i16> = (1..=i16::from(MAX_WIDTH)).collect();
    let committed = admin
        .execute(
            &format!(
                "INSERT INTO {}.queue_meta (queue, enqueue_shards) \
                 SELECT $1 || '_w' || w, w FROM unnest($2::smallint[]) AS w",
                db.s()
            ),
            &[&queue_base(db), &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "committing queue widths", &e));
    let verdict = match committed {
        Ok(_) => as_producer(db, vectors, &password).await,
        Err(e) => Err(e),
    };
    // Teardown regardless of the verdict: committed widths, then the role.
    sweep(db, &queue_base(db), &[], true)
        .await
        .map_err(harness)?;
    verdict
}

/// The `sql::privilege::*` cases.
pub(super) fn cases(vectors: &VectorSet) -> Vec<Case> {
    let sampled = sample(vectors);
    vec![Case::new("privilege", "producer_role_only", move |db| {
        db.pg.block_on(run(&db, &sampled)).map_err(harness)?
    })
    .requires("routing_precedence")
    .requires("job_routing")]
}
