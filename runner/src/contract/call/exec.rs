//! The calls themselves: each contract function's statement in a schema, and one call or
//! read through it (`insert_job`, `job_routing` and `job_stored`, one id or many in one
//! round trip), with the server's clock. What is bound and decoded is the call layer's
//! (`InsertJob::params`, `Observed::decode`, `Stored::decode`).

use tokio_postgres::{Client, Row, Statement};

use super::{InsertJob, Inserted, Observed, Stored, ROUTING_COLUMNS, STORED_COLUMNS};
use crate::contract::target::DbSetup;
use crate::pg::SqlText;

/// The `job_stored` statement of a quoted schema name.
#[must_use]
pub fn stored_sql_in(quoted_schema: &str) -> String {
    include_str!("../../../sql/job_stored_call.sql").in_schema(quoted_schema)
}

/// Read one job whole with a prepared [`stored_sql_in`] statement.
///
/// # Errors
/// A connection error or a column of the wrong type.
pub async fn stored(
    client: &Client,
    st: &Statement,
    job_id: i64,
) -> Result<Stored, tokio_postgres::Error> {
    let row = client.query_one(st, &[&job_id]).await?;
    Stored::decode(&row)
}

/// The statement of [`clock`] (`clock_now.sql`), for callers that prepare it once.
pub const CLOCK_SQL: &str = include_str!("../../../sql/clock_now.sql");

/// The server's clock as UTC text to the microsecond (`clock_now.sql`).
///
/// # Errors
/// The server's error.
pub async fn clock(client: &Client) -> Result<String, tokio_postgres::Error> {
    clock_with(client, CLOCK_SQL).await
}

/// [`clock`] through `statement`: [`CLOCK_SQL`] or that statement prepared.
///
/// # Errors
/// The server's error.
pub async fn clock_with<T: ?Sized + tokio_postgres::ToStatement>(
    client: &Client,
    statement: &T,
) -> Result<String, tokio_postgres::Error> {
    client.query_one(statement, &[]).await?.try_get(0)
}

/// The `insert_job` statement of `db`'s schema (README "prepared-statement form", text-cast
/// parameters).
#[must_use]
pub fn insert_sql(db: &DbSetup) -> String {
    insert_sql_in(db.schema.quoted())
}

/// [`insert_sql`] for a quoted schema name.
#[must_use]
pub fn insert_sql_in(quoted_schema: &str) -> String {
    include_str!("../../../sql/insert_job_call.sql").in_schema(quoted_schema)
}

/// The `job_routing` statement of `db`'s schema.
#[must_use]
pub fn read_sql(db: &DbSetup) -> String {
    read_sql_in(db.schema.quoted())
}

/// [`read_sql`] for a quoted schema name.
#[must_use]
pub fn read_sql_in(quoted_schema: &str) -> String {
    include_str!("../../../sql/job_routing_call.sql").in_schema(quoted_schema)
}

/// Call `insert_job` once with a prepared [`insert_sql`] statement.
///
/// # Errors
/// The server's refusal, a connection error, or a result column of the wrong type.
pub async fn insert(
    client: &Client,
    st: &Statement,
    r: &InsertJob,
) -> Result<Inserted, tokio_postgres::Error> {
    let row = client.query_one(st, &r.params()).await?;
    Inserted::decode(&row)
}

/// Read one job's stored routing with a prepared [`read_sql`] statement.
///
/// # Errors
/// A connection error or a column of the wrong type.
pub async fn read(
    client: &Client,
    st: &Statement,
    job_id: i64,
) -> Result<Observed, tokio_postgres::Error> {
    let row = client.query_one(st, &[&job_id]).await?;
    Observed::decode(&row)
}

/// Read many jobs' stored routing in one statement (`job_routing_many.sql`), in the order of
/// `ids`: the same rows as [`read`] on each id, in one round trip. An id for which
/// `job_routing` gives no row or several is read alone ([`read_sql_in`]), so its error is
/// the one-id read's.
///
/// # Errors
/// The server's error, a column of the wrong type, or the one-id read's error.
pub async fn read_many(
    client: &Client,
    quoted_schema: &str,
    ids: &[i64],
) -> Result<Vec<Observed>, tokio_postgres::Error> {
    let many = include_str!("../../../sql/job_routing_many.sql").in_schema(quoted_schema);
    read_each(
        client,
        &many,
        &read_sql_in(quoted_schema),
        ids,
        ROUTING_COLUMNS.len(),
        Observed::decode,
    )
    .await
}

/// Read many jobs whole in one statement (`job_stored_many.sql`), in the order of `ids`: the
/// same rows as [`stored`] on each id, with [`read_many`]'s fallback to a one-id read.
///
/// # Errors
/// The server's error, a column of the wrong type, or the one-id read's error.
pub async fn stored_many(
    client: &Client,
    quoted_schema: &str,
    ids: &[i64],
) -> Result<Vec<Stored>, tokio_postgres::Error> {
    let many = include_str!("../../../sql/job_stored_many.sql").in_schema(quoted_schema);
    read_each(
        client,
        &many,
        &stored_sql_in(quoted_schema),
        ids,
        STORED_COLUMNS.len(),
        Stored::decode,
    )
    .await
}

/// `many` (rows ordered by the id's 1-based position in `ids`, held in column `position`)
/// decoded per id; a position with no row or several is read alone with `one`.
async fn read_each<T>(
    client: &Client,
    many: &str,
    one: &str,
    ids: &[i64],
    position: usize,
    decode: fn(&Row) -> Result<T, tokio_postgres::Error>,
) -> Result<Vec<T>, tokio_postgres::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client.query(many, &[&ids]).await?;
    let mut rows = rows.iter().peekable();
    let mut out = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let at = i64::try_from(i).map_or(i64::MAX, |i| i.saturating_add(1));
        let mut mine = Vec::new();
        while let Some(row) = rows.next_if(|r| r.try_get::<_, i64>(position).ok() == Some(at)) {
            mine.push(row);
        }
        out.push(match mine.as_slice() {
            [row] => decode(row)?,
            _ => decode(&client.query_one(one, &[id]).await?)?,
        });
    }
    Ok(out)
}
