//! Preflight: abort the run on a missing or wrong schema, before any case runs.
//!
//! Preflight checks only what every other case depends on: the schema, exactly one
//! `insert_job` with the ADR 0001 D7 signature (last argument `p_opts jsonb`) and result
//! shape, `contract_version() = 1` and `contract_capabilities()` listing `contract_1_1` (the
//! revision this kit tests, ADR 0025: a v1.0 database returns raw keys from `job_routing`, so
//! it is refused with the fix rather than run into a cascade of failures). Everything else
//! about the catalog is a case (`sql::catalog::*`), not a refusal.
//!
//! A schema without `insert_job` that is released Awa ([`super::released`]) is not refused:
//! preflight returns a setup for the compat profile instead (ADR 0044). A release too old to
//! have `insert_job_compat` is refused in one line naming its version and the oldest checked.

use std::fmt::Display;
use std::sync::Arc;

use tokio_postgres::{Client, Row};

use super::call::{INSERT_JOB_ARG_NAMES, INSERT_JOB_ARG_TYPES, RESULT_COLUMNS};
use super::target::{DbSetup, PreflightError, CONTRACT_REVISION_CAPABILITY};
use crate::pg::{Pg, PgError, SchemaName};
use awa_conformance_core::CONTRACT_VERSION;

/// `name type` pairs as a signature shows them, for a mismatch message.
pub fn pair_list(names: &[String], types: &[String]) -> String {
    render_columns(names.iter().zip(types))
}

/// The one fix named when the contract is not where `--schema` points.
pub fn fix(schema: &SchemaName) -> String {
    format!(
        "install the reference schema with `awa-conformance schema install --schema {schema}`, \
         or pass --schema naming the schema that holds the contract"
    )
}

/// Columns of a function's composite return type: (names, types).
pub const RETURN_COLUMNS_SQL: &str = include_str!("../../sql/return_columns.sql");

/// One `pg_proc` row of a named function in the schema.
pub struct Proc {
    /// `pg_proc.oid`.
    pub oid: u32,
    /// Argument names, in order.
    pub arg_names: Vec<String>,
    /// Argument types as `format_type` renders them.
    pub arg_types: Vec<String>,
    /// Every argument is IN (no OUT, INOUT or VARIADIC).
    pub all_in: bool,
    /// The return type's oid.
    pub ret: u32,
    /// Returns a set.
    pub retset: bool,
}

/// Every overload of `name` in the schema of oid `ns`.
///
/// # Errors
/// The catalog query's error.
pub async fn procs(
    client: &Client,
    ns: u32,
    name: &str,
) -> Result<Vec<Proc>, tokio_postgres::Error> {
    let rows = client
        .query(include_str!("../../sql/procs.sql"), &[&ns, &name])
        .await?;
    rows.iter()
        .map(|r| {
            Ok(Proc {
                oid: r.try_get(0)?,
                arg_names: r.try_get(1)?,
                arg_types: r.try_get(2)?,
                all_in: r.try_get(3)?,
                ret: r.try_get(4)?,
                retset: r.try_get(5)?,
            })
        })
        .collect()
}

/// The columns of the composite type `ret`.
///
/// # Errors
/// The catalog query's error.
pub async fn return_columns(
    client: &Client,
    ret: u32,
) -> Result<Vec<(String, String)>, tokio_postgres::Error> {
    let row = client.query_one(RETURN_COLUMNS_SQL, &[&ret]).await?;
    let names: Vec<String> = row.try_get(0)?;
    let types: Vec<String> = row.try_get(1)?;
    Ok(names.into_iter().zip(types).collect())
}

/// `got` has exactly the columns `want`, in order, names and types alike.
#[must_use]
pub fn columns_match(got: &[(String, String)], want: &[(&str, &str)]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|((gn, gt), (wn, wt))| gn == wn && gt == wt)
}

/// `name type, name type, ...`: a signature's arguments or a return type's columns.
pub fn render_columns<N: Display, T: Display>(cols: impl IntoIterator<Item = (N, T)>) -> String {
    cols.into_iter()
        .map(|(n, t)| format!("{n} {t}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The one row of `SELECT <schema>.<function>()::<cast>`; a function that cannot be read is a
/// schema error naming it.
async fn contract_row(
    client: &Client,
    pg: &Pg,
    schema: &SchemaName,
    function: &str,
    cast: &str,
) -> Result<Row, PreflightError> {
    let s = schema.quoted();
    client
        .query_one(&format!("SELECT {s}.{function}()::{cast}"), &[])
        .await
        .map_err(|e| {
            PreflightError::Schema(format!(
                "{s}.{function}() cannot be read: {}; {}",
                pg.describe(&e),
                fix(schema)
            ))
        })
}

/// Connect and check everything the cases depend on (see module docs).
pub async fn preflight(
    pg: &Arc<Pg>,
    schema: &SchemaName,
    producer_role: &str,
) -> Result<DbSetup, PreflightError> {
    let client = pg.connect().await?;
    let q = |e: tokio_postgres::Error| {
        PreflightError::Unreachable(PgError::Db(format!(
            "preflight query failed: {}",
            pg.describe(&e)
        )))
    };
    let server_version: String = client
        .query_one("SELECT pg_catalog.current_setting('server_version')", &[])
        .await
        .map_err(q)?
        .get(0);
    let ns: Option<u32> = client
        .query_opt(
            "SELECT oid FROM pg_namespace WHERE nspname = $1",
            &[&schema.as_str()],
        )
        .await
        .map_err(q)?
        .map(|r| r.get(0));
    let Some(ns) = ns else {
        return Err(PreflightError::Schema(format!(
            "schema {} does not exist in {}; {}",
            schema.quoted(),
            pg.dsn().redacted(),
            fix(schema)
        )));
    };
    let s = schema.quoted();
    let found = procs(&client, ns, "insert_job").await.map_err(q)?;
    let ij = match found.as_slice() {
        [] => {
            // Released Awa (insert_job_compat, no insert_job): the compat profile runs.
            if let Some(released) = super::released::detect(&client, schema.as_str())
                .await
                .map_err(q)?
            {
                // A release before insert_job_compat: nothing to check, and installing the
                // reference would not help (it would check the kit, not the database).
                if let Some(why) = released.too_old(schema.as_str()) {
                    return Err(PreflightError::Schema(why));
                }
                return Ok(DbSetup {
                    pg: Arc::clone(pg),
                    schema: schema.to_owned(),
                    producer_role: producer_role.to_owned(),
                    run_id: super::sweep::run_id(),
                    began: i64::MAX,
                    capabilities: Vec::new(),
                    contract_version: 0,
                    server_version,
                    compat: Some(released),
                    producer: std::sync::Mutex::new(None),
                    plain_sessions: std::sync::atomic::AtomicBool::new(false),
                    liveness: None,
                });
            }
            return Err(PreflightError::Schema(format!(
                "{s}.insert_job does not exist; {}",
                fix(schema)
            )));
        }
        [one] => one,
        many => {
            return Err(PreflightError::Schema(format!(
                "{s}.insert_job has {} overloads; the contract allows exactly one (ADR-043: no \
                 overloads): drop the extra ones",
                many.len()
            )))
        }
    };
    let want_names: Vec<String> = INSERT_JOB_ARG_NAMES
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let want_types: Vec<String> = INSERT_JOB_ARG_TYPES
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    if ij.arg_names != want_names || ij.arg_types != want_types || !ij.all_in || ij.retset {
        let last_ok = ij.arg_names.last().map(String::as_str) == Some("p_opts")
            && ij.arg_types.last().map(String::as_str) == Some("jsonb");
        return Err(PreflightError::Schema(format!(
            "{s}.insert_job has the wrong signature ({}){}; contract v1 (ADR 0001 D7) requires \
             ({}) returning one row; {}",
            pair_list(&ij.arg_names, &ij.arg_types),
            if last_ok {
                ""
            } else {
                ", and its last argument must be `p_opts jsonb`"
            },
            pair_list(&want_names, &want_types),
            fix(schema)
        )));
    }
    let cols = return_columns(&client, ij.ret).await.map_err(q)?;
    if !columns_match(&cols, &RESULT_COLUMNS) {
        return Err(PreflightError::Schema(format!(
            "{s}.insert_job returns ({}), contract v1 requires insert_job_result ({}); {}",
            render_columns(cols.iter().map(|(n, t)| (n, t))),
            render_columns(RESULT_COLUMNS),
            fix(schema)
        )));
    }
    let version = contract_row(&client, pg, schema, "contract_version", "integer")
        .await?
        .get::<_, i32>(0);
    if i64::from(version) != i64::from(CONTRACT_VERSION) {
        return Err(PreflightError::Schema(format!(
            "{s}.contract_version() is {version}; this kit tests contract version \
             {CONTRACT_VERSION}: use the awa-conformance release for contract {version}"
        )));
    }
    let capabilities: Vec<String> =
        contract_row(&client, pg, schema, "contract_capabilities", "text[]")
            .await?
            .try_get::<_, Option<Vec<String>>>(0)
            .map_err(q)?
            .unwrap_or_default();
    if !capabilities
        .iter()
        .any(|c| c == CONTRACT_REVISION_CAPABILITY)
    {
        return Err(PreflightError::Schema(format!(
            "{s}.contract_capabilities() lacks {CONTRACT_REVISION_CAPABILITY:?}: the database \
             implements contract v1.0, and this kit tests v1.1 (docs/contract.md §13); \
             re-run `awa-conformance schema install --schema {schema}` to upgrade the reference \
             schema in place, or implement v1.1"
        )));
    }
    Ok(DbSetup {
        pg: Arc::clone(pg),
        schema: schema.clone(),
        producer_role: producer_role.to_owned(),
        run_id: super::sweep::run_id(),
        began: i64::MAX,
        capabilities,
        contract_version: version,
        server_version,
        compat: None,
        producer: std::sync::Mutex::new(None),
        plain_sessions: std::sync::atomic::AtomicBool::new(false),
        liveness: None,
    })
}
