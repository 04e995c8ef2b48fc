//! The reference schema, embedded: `schema install` applies it, `schema print` shows it.
//!
//! The files `schema/*.sql` are embedded in install order. They name the schema and the
//! producer role only through the tokens `@schema@` and `@producer_role@`; the substitution
//! rule (schema/README.md) replaces each token, byte for byte, with the double-quoted name.
//! The schema is a [`SchemaName`](crate::pg::SchemaName), the one schema-name type of the
//! runner (any name PostgreSQL accepts, mixed case and spaces included), less the characters
//! the files cannot carry ([`UNSUPPORTED_IN_SCHEMA`], control characters); role names are
//! restricted to `^[A-Za-z_][A-Za-z0-9_]{0,62}$`.
//!
//! `schema install` never replaces a different implementation silently: it first compares
//! the installed schema with the reference ([`status`]: the reference is installed into a
//! scratch schema inside a transaction that is rolled back, and the two catalogs are
//! compared object by object) and refuses, naming what differs, unless forced. It marks what
//! it creates with a comment ([`MARK`]), so `schema uninstall` removes exactly that.
//!
//! Its submodules, bottom-up (each uses only those before it, and this file's [`MARK`],
//! [`InstallError`] and session helpers):
//!
//! 1. `reference.rs`: the embedded files ([`FILES`]), the name checks and the substitution
//!    ([`substituted`], [`print()`]);
//! 2. `catalog.rs`: what the catalog says about a schema (definitions, objects, marks);
//! 3. `compare.rs`: the comparison with the reference and its [`Status`] (`schema status`);
//! 4. `apply.rs`: `schema install` and `schema uninstall`.

mod apply;
mod catalog;
mod compare;
mod reference;

pub use apply::{install, install_with, uninstall, Installed, Removed};
pub use compare::{status, Status, STATUS_DETAIL_LINES};
pub use reference::{owner_role, print, substituted, valid_name, FILES, UNSUPPORTED_IN_SCHEMA};

use crate::pg::{Dsn, Pg, PgError};

/// The comment `schema install` puts on every schema, role, function, table and type it
/// creates; `schema uninstall` removes only objects that carry it.
pub const MARK: &str = "created by awa-conformance schema install";

/// Why the schema could not be printed or installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A producer role name outside the supported pattern.
    #[error(
        "invalid --producer-role {name:?}: use 1-63 characters matching [A-Za-z_][A-Za-z0-9_]*"
    )]
    InvalidRole {
        /// The rejected name.
        name: String,
    },
    /// A schema name holding a character the reference SQL cannot carry.
    #[error(
        "--schema {name:?} holds {ch:?}, which the reference SQL cannot carry (it writes the \
         quoted schema name inside string literals, format() templates and dollar-quoted \
         bodies, and in comments); choose a name without ', %, $ or control characters (mixed \
         case, spaces and \" are fine)"
    )]
    UnsupportedSchema {
        /// The rejected name.
        name: String,
        /// The first offending character.
        ch: char,
    },
    /// Connecting failed.
    #[error(transparent)]
    Pg(#[from] PgError),
    /// A file failed to apply (the whole install was rolled back).
    #[error("installing {file} failed: {reason}; nothing was changed (one transaction)")]
    Apply {
        /// The file that failed.
        file: &'static str,
        /// The server's error (scrubbed).
        reason: String,
    },
    /// The schema holds objects that differ from the reference: installing would replace them.
    #[error(
        "schema {schema} holds a different implementation, which install would replace: {}; \
         nothing was changed. Test it as it is (awa-conformance --schema {schema}), compare \
         with `awa-conformance schema status`, or pass --force to overwrite it",
        .differences.join("; ")
    )]
    Differs {
        /// The schema.
        schema: String,
        /// What differs (one entry per object).
        differences: Vec<String>,
    },
    /// An install file was refused for lack of a privilege (the whole install was rolled
    /// back); `missing` names what the catalog says the role lacks.
    #[error(
        "installing {file} failed: {reason}; nothing was changed (one transaction). {}",
        if missing.is_empty() {
            format!(
                "The catalog shows the role {user} lacking none of what install is known to \
                 need (CREATE on the database and schema, CREATEROLE for a new role, ADMIN \
                 OPTION on the owner role on PostgreSQL 16+); the server's message names the \
                 object it refused"
            )
        } else {
            format!(
                "The role {user} lacks: {}; grant it, or install as a superuser",
                missing.join("; ")
            )
        }
    )]
    Privileges {
        /// The file that failed.
        file: &'static str,
        /// The installing role.
        user: String,
        /// What the role lacks, one entry each.
        missing: Vec<String>,
        /// The server's error (scrubbed).
        reason: String,
    },
    /// The server is older than the oldest major the reference schema supports.
    #[error("{0}; nothing was installed")]
    Server(crate::contract::server::ServerError),
    /// `schema status` on a hot standby, which can hold no scratch reference to compare with.
    #[error(
        "{dsn} is a hot standby: schema status compares the schema with the reference installed \
         into a scratch schema in a rolled-back transaction, and a standby allows no write, not \
         even one rolled back; run schema status against the primary (the standby replays its \
         schema)"
    )]
    Standby {
        /// The redacted DSN.
        dsn: String,
    },
    /// Comparing or uninstalling failed on the server (the transaction was rolled back).
    #[error("{what} failed: {reason}; nothing was changed (one transaction)")]
    Db {
        /// What was being done.
        what: &'static str,
        /// The server's error (scrubbed).
        reason: String,
    },
}

/// The `map_err` of a failed statement: [`InstallError::Db`] naming what was being done, with
/// the server's error scrubbed.
fn db_err<'a>(
    dsn: &'a Dsn,
    what: &'static str,
) -> impl Fn(tokio_postgres::Error) -> InstallError + 'a {
    move |e| InstallError::Db {
        what,
        reason: crate::pg::describe_error(dsn, &e),
    }
}

/// Run `f` on a fresh connection to `dsn`.
fn with_client<T>(
    dsn: &Dsn,
    f: impl AsyncFnOnce(&mut tokio_postgres::Client) -> Result<T, InstallError>,
) -> Result<T, InstallError> {
    let pg = Pg::new(dsn.clone())?;
    pg.block_on(async {
        let mut client = pg.connect().await?;
        f(&mut client).await
    })?
}

impl From<InstallError> for crate::error::Error {
    fn from(e: InstallError) -> Self {
        use crate::error::Kind;
        match e {
            InstallError::InvalidRole { .. } | InstallError::UnsupportedSchema { .. } => {
                Self::caused(Kind::Usage, e)
            }
            InstallError::Pg(p) => p.into(),
            InstallError::Apply { .. }
            | InstallError::Privileges { .. }
            | InstallError::Differs { .. }
            | InstallError::Server(_)
            | InstallError::Standby { .. }
            | InstallError::Db { .. } => Self::caused(Kind::DatabaseSetup, e),
        }
    }
}
