//! What the catalog says about a schema, read by `schema status`, `install` and `uninstall`:
//! a snapshot of every definition, the objects install can create, and which of them (and
//! which schema and roles) carry [`MARK`], i.e. were created by install.
//!
//! Each read runs inside the caller's transaction (most as one embedded query of
//! `runner/sql/`), so what it sees is what the caller then changes.

use std::collections::BTreeMap;

use super::{db_err, InstallError, MARK};
use crate::pg::Dsn;

/// One object of a catalog snapshot: `(kind, name)` → definition.
pub(super) type Snapshot = BTreeMap<(String, String), String>;

/// Set the transaction's search_path to `pg_catalog` alone (so the server prints qualified
/// names) and return the caller's, for the caller to restore.
pub(super) async fn pin_search_path(
    tx: &tokio_postgres::Transaction<'_>,
) -> Result<String, tokio_postgres::Error> {
    tx.query_one(
        "SELECT pg_catalog.current_setting('search_path'), \
         pg_catalog.set_config('search_path', 'pg_catalog', true)",
        &[],
    )
    .await?
    .try_get(0)
}

pub(super) async fn snapshot(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
) -> Result<Snapshot, InstallError> {
    let rows = tx
        .query(include_str!("../../sql/schema_snapshot.sql"), &[&schema])
        .await
        .map_err(db_err(dsn, "reading the installed schema"))?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), r.get(2)))
        .collect())
}

/// Top-level objects of `schema` install can create: (SQL kind, identity, marked).
pub(super) async fn objects(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
) -> Result<Vec<(String, String, bool)>, InstallError> {
    let err = db_err(dsn, "listing the schema's objects");
    let saved = pin_search_path(tx).await.map_err(&err)?;
    let rows = tx
        .query(
            include_str!("../../sql/schema_objects.sql"),
            &[&schema, &MARK],
        )
        .await
        .map_err(&err)?;
    tx.execute(
        "SELECT pg_catalog.set_config('search_path', $1, true)",
        &[&saved],
    )
    .await
    .map_err(&err)?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

/// (schema exists, schema marked, role exists, role marked).
pub(super) async fn marks(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
    role: &str,
) -> Result<(bool, bool, bool, bool), InstallError> {
    let r = tx
        .query_one(
            include_str!("../../sql/schema_marks.sql"),
            &[&schema, &role, &MARK],
        )
        .await
        .map_err(db_err(dsn, "reading what install created"))?;
    Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
}

/// Whether a role exists, and whether it carries [`MARK`] (install created it).
pub(super) async fn role_mark(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    role: &str,
) -> Result<(bool, bool), InstallError> {
    let r = tx
        .query_opt(include_str!("../../sql/role_mark.sql"), &[&role, &MARK])
        .await
        .map_err(db_err(dsn, "reading what install created"))?;
    Ok(r.map_or((false, false), |r| (true, r.get(0))))
}
