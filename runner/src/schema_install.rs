//! The reference schema, embedded: `schema install` applies it, `schema print` shows it.
//!
//! The files `schema/*.sql` are embedded in install order. They name the schema and the
//! producer role only through the tokens `@schema@` and `@producer_role@`; the substitution
//! rule (schema/README.md) replaces each token, byte for byte, with the double-quoted name.
//! The schema is a [`SchemaName`], the one schema-name type of the runner (any name PostgreSQL
//! accepts, mixed case and spaces included), less the characters the files cannot carry
//! ([`UNSUPPORTED_IN_SCHEMA`], control characters); role names are restricted to `^[A-Za-z_][A-Za-z0-9_]{0,62}$`.
//!
//! `schema install` never replaces a different implementation silently: it first compares
//! the installed schema with the reference ([`status`]: the reference is installed into a
//! scratch schema inside a transaction that is rolled back, and the two catalogs are
//! compared object by object) and refuses, naming what differs, unless forced. It marks what
//! it creates with a comment ([`MARK`]), so `schema uninstall` removes exactly that.

use std::collections::BTreeMap;

use crate::contract::released::Released;
use crate::pg::{quote_ident, Dsn, Pg, PgError, SchemaName};

/// The comment `schema install` puts on every schema, role, function, table and type it
/// creates; `schema uninstall` removes only objects that carry it.
pub const MARK: &str = "created by awa-conformance schema install";

/// Characters a schema name for `schema install` may not hold: the files write the quoted
/// name inside string literals (`'@schema@.queue_meta'::regclass`, where `'` would end the
/// literal), inside `format()` templates (where `%` is a directive) and inside dollar-quoted
/// bodies (where `$` can end the quote). Control characters are refused too: the files name
/// the schema in `--` comments, which a line break would end.
pub const UNSUPPORTED_IN_SCHEMA: [char; 3] = ['\'', '%', '$'];

/// How many detail lines `schema status` prints before it summarises the rest.
pub const STATUS_DETAIL_LINES: usize = 20;

/// The reference SQL files, in install order (file name, contents).
pub const FILES: [(&str, &str); 8] = [
    (
        "001_schema_and_catalog.sql",
        include_str!("../../schema/001_schema_and_catalog.sql"),
    ),
    (
        "002_storage.sql",
        include_str!("../../schema/002_storage.sql"),
    ),
    (
        "003_routing_functions.sql",
        include_str!("../../schema/003_routing_functions.sql"),
    ),
    (
        "004_insert_job.sql",
        include_str!("../../schema/004_insert_job.sql"),
    ),
    (
        "005_producer_role.sql",
        include_str!("../../schema/005_producer_role.sql"),
    ),
    (
        "006_function_owner.sql",
        include_str!("../../schema/006_function_owner.sql"),
    ),
    ("007_bulk.sql", include_str!("../../schema/007_bulk.sql")),
    (
        "008_job_stored.sql",
        include_str!("../../schema/008_job_stored.sql"),
    ),
];

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

/// Whether `name` is a supported producer role name (README substitution rule).
#[must_use]
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Check the names before any SQL is built from them.
fn check(schema: &SchemaName, role: &str) -> Result<(), InstallError> {
    if let Some(ch) = schema
        .as_str()
        .chars()
        .find(|c| UNSUPPORTED_IN_SCHEMA.contains(c) || c.is_control())
    {
        return Err(InstallError::UnsupportedSchema {
            name: schema.as_str().to_owned(),
            ch,
        });
    }
    if valid_name(role) {
        Ok(())
    } else {
        Err(InstallError::InvalidRole {
            name: role.to_owned(),
        })
    }
}

/// One file with the tokens substituted in a single pass, so a schema name that itself holds
/// `@producer_role@` is never substituted again.
#[must_use]
fn substitute(sql: &str, schema: &SchemaName, role: &str) -> String {
    let role = quote_ident(role);
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some((before, tail)) = rest.split_once('@') {
        out.push_str(before);
        if let Some(after) = tail.strip_prefix("schema@") {
            out.push_str(schema.quoted());
            rest = after;
        } else if let Some(after) = tail.strip_prefix("producer_role@") {
            out.push_str(&role);
            rest = after;
        } else {
            out.push('@');
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// The files with the tokens substituted, in install order.
///
/// # Errors
/// [`InstallError::UnsupportedSchema`], [`InstallError::InvalidRole`].
pub fn substituted(
    schema: &SchemaName,
    role: &str,
) -> Result<Vec<(&'static str, String)>, InstallError> {
    check(schema, role)?;
    Ok(FILES
        .iter()
        .map(|(name, sql)| (*name, substitute(sql, schema, role)))
        .collect())
}

/// The whole install script for `schema print`: every file, substituted, wrapped in one
/// transaction, each preceded by a comment naming it.
///
/// # Errors
/// [`InstallError::UnsupportedSchema`], [`InstallError::InvalidRole`].
pub fn print(schema: &SchemaName, role: &str) -> Result<String, InstallError> {
    let mut out = format!(
        "-- Awa producer contract v1 reference schema (schema {}, producer role {}).\n\
         -- Generated by awa-conformance schema print; apply with psql -v ON_ERROR_STOP=1.\n\
         BEGIN;\n",
        schema.quoted(),
        quote_ident(role)
    );
    for (name, sql) in substituted(schema, role)? {
        out.push_str(&format!("\n-- ===== {name} =====\n"));
        out.push_str(&sql);
        if !sql.ends_with('\n') {
            out.push('\n');
        }
    }
    out.push_str("\nCOMMIT;\n");
    Ok(out)
}

/// One object of a catalog snapshot: `(kind, name)` → definition.
type Snapshot = BTreeMap<(String, String), String>;

/// How the installed schema compares with the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// No reference object is installed (the schema is absent or holds only other objects).
    Missing,
    /// Every reference object is installed with the reference definition. `others` lists
    /// objects the reference does not have (e.g. a released Awa sharing the schema).
    Same {
        /// Objects outside the reference, left alone by install and uninstall.
        others: Vec<String>,
    },
    /// Some reference objects are missing or different.
    Different {
        /// Reference objects whose installed definition differs (install would replace them).
        differs: Vec<String>,
        /// Reference objects that are not installed.
        missing: Vec<String>,
        /// Objects outside the reference.
        others: Vec<String>,
    },
    /// The schema holds released Awa (what the run's preflight recognises and checks with the
    /// compat profile), not the contract: comparing it object by object with the reference
    /// would list every object of both, which tells nothing.
    ReleasedAwa {
        /// What preflight found (schema version, storage engine).
        released: Released,
        /// Reference objects whose installed definition differs.
        differs: Vec<String>,
        /// Reference objects that are not installed.
        missing: Vec<String>,
        /// Objects outside the reference.
        others: Vec<String>,
    },
}

impl Status {
    /// A short word: `missing`, `same`, `different` or `released-awa`.
    #[must_use]
    pub fn word(&self) -> &'static str {
        match self {
            Self::Missing => "missing",
            Self::Same { .. } => "same",
            Self::Different { .. } => "different",
            Self::ReleasedAwa { .. } => "released-awa",
        }
    }

    /// The exit code of `schema status`: [`crate::exit::SCHEMA_DIFFERS`] when the schema
    /// holds something other than the reference (install would refuse or complete it),
    /// else success (`missing` is a clean slate for install).
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Missing | Self::Same { .. } => crate::exit::SUCCESS,
            Self::Different { .. } | Self::ReleasedAwa { .. } => crate::exit::SCHEMA_DIFFERS,
        }
    }

    /// A multi-line report for `schema status`: at most `limit` detail lines (all with
    /// `None`; none for released Awa unless all are asked for), then how many were left out
    /// and how to see them.
    #[must_use]
    pub fn report(&self, schema: &SchemaName, limit: Option<usize>) -> String {
        let s = schema.quoted();
        let mut out = match self {
            Self::Missing => format!("missing: schema {s} holds no object of the reference\n"),
            Self::Same { .. } => {
                format!("same: schema {s} holds the reference, object for object\n")
            }
            Self::Different { .. } => {
                format!("different: schema {s} differs from the reference\n")
            }
            Self::ReleasedAwa { released, .. } => {
                let mut text = format!(
                    "released-awa: schema {s} holds {}; it is not the contract reference\n",
                    released.describe()
                );
                if released.compat {
                    text.push_str(&format!(
                        "  a run checks it with the compat profile, installing nothing: \
                         awa-conformance --dsn URL --schema {s}\n"
                    ));
                } else {
                    // Too old for the compat profile: say so here rather than at the run.
                    text.push_str(&format!(
                        "  a run refuses it (exit 5): the compat profile checks released Awa \
                         from schema version {} on; upgrade it with `awa migrate` of a newer \
                         awa-cli\n",
                        crate::contract::released::OLDEST_CHECKED
                    ));
                }
                if released.compat && !released.queue_storage {
                    text.push_str(
                        "  it has no queue storage (released from 0.6.0), so the cases that read \
                         an enqueue shard are not applicable\n",
                    );
                } else if released.compat && released.storage_schema.is_none() {
                    text.push_str(&format!(
                        "  queue storage is not active, so the cases that read it are not \
                         applicable: activate it as a fresh 0.6.x worker does (SELECT \
                         {s}.storage_auto_finalize_if_fresh('{}')) to check them too\n",
                        schema.as_str()
                    ));
                }
                text.push_str("  schema install would refuse to replace it\n");
                text
            }
        };
        let limit = match self {
            Self::ReleasedAwa { .. } => limit.map(|_| 0),
            _ => limit,
        };
        let (differs, missing, others): (&[String], &[String], &[String]) = match self {
            Self::Missing => (&[], &[], &[]),
            Self::Same { others } => (&[], &[], others),
            Self::Different {
                differs,
                missing,
                others,
            }
            | Self::ReleasedAwa {
                differs,
                missing,
                others,
                ..
            } => (differs, missing, others),
        };
        let lines: Vec<String> = differs
            .iter()
            .map(|d| format!("  differs: {d}\n"))
            .chain(missing.iter().map(|m| format!("  missing: {m}\n")))
            .chain(
                others
                    .iter()
                    .map(|o| format!("  not in the reference (left alone): {o}\n")),
            )
            .collect();
        let shown = limit.unwrap_or(lines.len()).min(lines.len());
        for line in lines.iter().take(shown) {
            out.push_str(line);
        }
        if shown < lines.len() {
            out.push_str(&format!(
                "  ... and {} more ({} differ, {} missing, {} not in the reference); \
                 schema status --all lists every one\n",
                lines.len() - shown,
                differs.len(),
                missing.len(),
                others.len()
            ));
        }
        out
    }
}

fn db_err<'a>(
    dsn: &'a Dsn,
    what: &'static str,
) -> impl Fn(tokio_postgres::Error) -> InstallError + 'a {
    move |e| InstallError::Db {
        what,
        reason: crate::pg::describe_error(dsn, &e),
    }
}

/// Run `sql` inside the savepoint `name` of `tx`: its own error is returned, with the savepoint
/// rolled back so the transaction goes on; a failing savepoint is the uninstall's error.
async fn in_savepoint(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    name: &str,
    sql: &str,
) -> Result<Result<(), tokio_postgres::Error>, InstallError> {
    tx.batch_execute(&format!("SAVEPOINT {name}"))
        .await
        .map_err(db_err(dsn, "schema uninstall"))?;
    let res = tx.batch_execute(sql).await;
    if res.is_err() {
        tx.batch_execute(&format!("ROLLBACK TO SAVEPOINT {name}"))
            .await
            .map_err(db_err(dsn, "schema uninstall"))?;
    }
    Ok(res)
}

/// Set the transaction's search_path to `pg_catalog` alone (so the server prints qualified
/// names) and return the caller's, for the caller to restore.
async fn pin_search_path(
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

async fn snapshot(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
) -> Result<Snapshot, InstallError> {
    let rows = tx
        .query(include_str!("../sql/schema_snapshot.sql"), &[&schema])
        .await
        .map_err(db_err(dsn, "reading the installed schema"))?;
    Ok(rows
        .iter()
        .map(|r| ((r.get(0), r.get(1)), r.get(2)))
        .collect())
}

/// The first line where two definitions differ, for a one-line report.
fn first_difference(installed: &str, reference: &str) -> String {
    let cut = |l: &str| l.trim().chars().take(100).collect::<String>();
    let (a, b): (Vec<&str>, Vec<&str>) = (installed.lines().collect(), reference.lines().collect());
    for i in 0..a.len().max(b.len()) {
        let (x, y) = (a.get(i).copied(), b.get(i).copied());
        if x != y {
            return format!(
                "line {}: installed `{}`, reference `{}`",
                i + 1,
                x.map_or_else(|| "(end)".to_owned(), cut),
                y.map_or_else(|| "(end)".to_owned(), cut)
            );
        }
    }
    "definitions differ".to_owned()
}

/// Compare the installed schema with the reference, inside `tx` (which the caller rolls
/// back or commits; the scratch reference is dropped again either way).
async fn compare(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &SchemaName,
    role: &str,
) -> Result<Status, InstallError> {
    // Qualified names in every definition; the caller's search_path is restored at the end.
    let saved = pin_search_path(tx)
        .await
        .map_err(db_err(dsn, "comparing with the reference"))?;
    let installed = snapshot(tx, dsn, schema.as_str()).await?;
    // The server writes a schema name in two forms: as an identifier, quoted only when it
    // must be (`awa.f`, `"AwaMixed".f`), and bare inside literals (a function's `SET
    // search_path TO 'pg_catalog', 'AwaMixed', ...`). The scratch name needs quoting exactly
    // when the schema's does, so each of its forms maps onto the schema's same form.
    let needs_quotes: bool = tx
        .query_one(
            "SELECT pg_catalog.quote_ident($1) OPERATOR(pg_catalog.<>) $1",
            &[&schema.as_str()],
        )
        .await
        .map_err(db_err(dsn, "comparing with the reference"))?
        .get(0);
    let id = crate::contract::sweep::run_id();
    let scratch = SchemaName::new(&if needs_quotes {
        format!("Awa Conformance Ref {id}")
    } else {
        format!("awa_conformance_ref_{id}")
    })
    .map_err(|reason| InstallError::Db {
        what: "naming the scratch schema",
        reason,
    })?;
    tx.batch_execute("SAVEPOINT awa_conformance_reference")
        .await
        .map_err(db_err(dsn, "comparing with the reference"))?;
    for (file, sql) in substituted(&scratch, role)? {
        if let Err(e) = tx.batch_execute(&sql).await {
            return Err(apply_error(tx, dsn, schema, role, file, &e).await);
        }
    }
    tx.batch_execute("SET LOCAL search_path = pg_catalog")
        .await
        .map_err(db_err(dsn, "comparing with the reference"))?;
    let reference_raw = snapshot(tx, dsn, scratch.as_str()).await?;
    tx.batch_execute("ROLLBACK TO SAVEPOINT awa_conformance_reference")
        .await
        .map_err(db_err(dsn, "comparing with the reference"))?;
    tx.execute(
        "SELECT pg_catalog.set_config('search_path', $1, true)",
        &[&saved],
    )
    .await
    .map_err(db_err(dsn, "comparing with the reference"))?;
    // The scratch name is unique, so replacing it cannot touch anything else: first its
    // quoted form (the install files always quote, the server when it must), then its bare
    // form (literals, and identifiers that need no quotes).
    let fix = |t: &str| {
        t.replace(scratch.quoted(), schema.quoted())
            .replace(scratch.as_str(), schema.as_str())
    };
    let reference: Snapshot = reference_raw
        .into_iter()
        .map(|((k, n), d)| ((k, fix(&n)), fix(&d)))
        .collect();
    let label = |(k, n): &(String, String)| format!("{k} {n}");
    let has_reference_object = installed
        .keys()
        .any(|key| key.0 != "schema" && reference.contains_key(key));
    if !has_reference_object {
        return Ok(Status::Missing);
    }
    let mut differs = Vec::new();
    let mut missing = Vec::new();
    for (key, def) in &reference {
        match installed.get(key) {
            None => missing.push(label(key)),
            Some(got) if got != def => {
                differs.push(format!("{} ({})", label(key), first_difference(got, def)));
            }
            Some(_) => {}
        }
    }
    let others: Vec<String> = installed
        .keys()
        .filter(|k| !reference.contains_key(*k))
        .map(label)
        .collect();
    Ok(if differs.is_empty() && missing.is_empty() {
        Status::Same { others }
    } else {
        Status::Different {
            differs,
            missing,
            others,
        }
    })
}

/// The error of an install file that failed, naming the privileges the installing role lacks
/// when that was the cause (read from the catalog, not guessed).
async fn apply_error(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &SchemaName,
    role: &str,
    file: &'static str,
    e: &tokio_postgres::Error,
) -> InstallError {
    let reason = crate::pg::describe_error(dsn, e);
    let denied = e.code() == Some(&tokio_postgres::error::SqlState::INSUFFICIENT_PRIVILEGE);
    if !denied {
        return InstallError::Apply { file, reason };
    }
    let missing = async {
        tx.batch_execute("ROLLBACK TO SAVEPOINT awa_conformance_reference")
            .await?;
        let rows = tx
            .query(
                include_str!("../sql/install_missing_privileges.sql"),
                &[&schema.as_str(), &role, &owner_role(role)],
            )
            .await?;
        Ok::<_, tokio_postgres::Error>(rows.iter().map(|r| r.get(0)).collect::<Vec<String>>())
    }
    .await
    .unwrap_or_default();
    InstallError::Privileges {
        file,
        user: dsn.user().to_owned(),
        missing,
        reason,
    }
}

/// Top-level objects of `schema` install can create: (SQL kind, identity, marked).
async fn objects(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
) -> Result<Vec<(String, String, bool)>, InstallError> {
    let err = db_err(dsn, "listing the schema's objects");
    let saved = pin_search_path(tx).await.map_err(&err)?;
    let rows = tx
        .query(include_str!("../sql/schema_objects.sql"), &[&schema, &MARK])
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
async fn marks(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    schema: &str,
    role: &str,
) -> Result<(bool, bool, bool, bool), InstallError> {
    let r = tx
        .query_one(
            include_str!("../sql/schema_marks.sql"),
            &[&schema, &role, &MARK],
        )
        .await
        .map_err(db_err(dsn, "reading what install created"))?;
    Ok((r.get(0), r.get(1), r.get(2), r.get(3)))
}

/// The bounded owner of the definer functions that `006_function_owner.sql` creates: the
/// producer role's name with a trailing `_producer` replaced by `_owner` (else `_owner`
/// appended), cut to 63 bytes (names are ASCII, see [`check`]).
#[must_use]
pub fn owner_role(producer_role: &str) -> String {
    let mut owner = format!(
        "{}_owner",
        producer_role
            .strip_suffix("_producer")
            .unwrap_or(producer_role)
    );
    owner.truncate(63);
    owner
}

/// Whether a role exists, and whether it carries [`MARK`] (install created it).
async fn role_mark(
    tx: &tokio_postgres::Transaction<'_>,
    dsn: &Dsn,
    role: &str,
) -> Result<(bool, bool), InstallError> {
    let r = tx
        .query_opt(include_str!("../sql/role_mark.sql"), &[&role, &MARK])
        .await
        .map_err(db_err(dsn, "reading what install created"))?;
    Ok(r.map_or((false, false), |r| (true, r.get(0))))
}

/// What `install_with` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Installed {
    /// The reference was installed (fresh, or completing a partial install).
    Installed,
    /// The identical reference was already there; nothing was changed.
    AlreadyThere,
    /// A different implementation was overwritten (`--force`).
    Overwritten,
}

/// Apply every file in one transaction through an open client, unless the schema holds
/// objects that differ from the reference (then refuse, unless `force`). Marks every
/// object it creates with [`MARK`].
///
/// # Errors
/// [`InstallError::Differs`], [`InstallError::Apply`] naming the file (everything rolled
/// back), or a bad name.
pub async fn install_with(
    client: &mut tokio_postgres::Client,
    dsn: &Dsn,
    schema: &SchemaName,
    role: &str,
    force: bool,
) -> Result<Installed, InstallError> {
    let files = substituted(schema, role)?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| InstallError::Apply {
            file: "BEGIN",
            reason: crate::pg::describe_error(dsn, &e),
        })?;
    // Installs that share the producer role (roles are cluster-wide) take turns: two first
    // installs at once otherwise both miss the role, one creates it and the other's GRANT
    // can fail with "role does not exist" (seen with concurrent test installs). Held to the
    // end of the transaction, before anything is read, so the turn that comes second sees
    // the role the first committed and does not mark it as its own.
    tx.execute(include_str!("../sql/install_lock.sql"), &[&role])
        .await
        .map_err(|e| InstallError::Apply {
            file: "install_lock.sql",
            reason: crate::pg::describe_error(dsn, &e),
        })?;
    // The reference SQL needs PostgreSQL 14: refuse an older server in one line rather than
    // fail on whichever statement it lacks first. A newer untested major installs; the run
    // that checks it is what refuses it without --allow-untested-server.
    let version: i32 = tx
        .query_one(
            "SELECT pg_catalog.current_setting('server_version_num')::integer",
            &[],
        )
        .await
        .map_err(db_err(dsn, "reading server_version_num"))?
        .get(0);
    if let Err(e @ crate::contract::server::ServerError::TooOld { .. }) =
        crate::contract::server::support(version, true)
    {
        return Err(InstallError::Server(e));
    }
    let status = compare(&tx, dsn, schema, role).await?;
    let outcome = match &status {
        Status::Same { .. } => return Ok(Installed::AlreadyThere),
        Status::Different { differs, .. } if !differs.is_empty() => {
            if !force {
                return Err(InstallError::Differs {
                    schema: schema.as_str().to_owned(),
                    differences: differs.clone(),
                });
            }
            Installed::Overwritten
        }
        _ => Installed::Installed,
    };
    let (schema_existed, _, role_existed, _) = marks(&tx, dsn, schema.as_str(), role).await?;
    let owner = owner_role(role);
    let (owner_existed, _) = role_mark(&tx, dsn, &owner).await?;
    let before: Vec<String> = if schema_existed {
        objects(&tx, dsn, schema.as_str())
            .await?
            .into_iter()
            .map(|o| o.1)
            .collect()
    } else {
        Vec::new()
    };
    for (file, sql) in &files {
        tx.batch_execute(sql)
            .await
            .map_err(|e| InstallError::Apply {
                file,
                reason: crate::pg::describe_error(dsn, &e),
            })?;
    }
    // MARK holds no quote, so it needs no escaping as a literal.
    let mark = format!("'{MARK}'");
    let mut comments = String::new();
    for (kind, identity, _) in objects(&tx, dsn, schema.as_str()).await? {
        if !before.contains(&identity) {
            comments.push_str(&format!("COMMENT ON {kind} {identity} IS {mark};\n"));
        }
    }
    if !schema_existed {
        comments.push_str(&format!(
            "COMMENT ON SCHEMA {} IS {mark};\n",
            schema.quoted()
        ));
    }
    if !role_existed {
        comments.push_str(&format!(
            "COMMENT ON ROLE {} IS {mark};\n",
            quote_ident(role)
        ));
    }
    if !owner_existed {
        comments.push_str(&format!(
            "COMMENT ON ROLE {} IS {mark};\n",
            quote_ident(&owner)
        ));
    }
    tx.batch_execute(&comments)
        .await
        .map_err(|e| InstallError::Apply {
            file: "marking what install created",
            reason: crate::pg::describe_error(dsn, &e),
        })?;
    tx.commit().await.map_err(|e| InstallError::Apply {
        file: "COMMIT",
        reason: crate::pg::describe_error(dsn, &e),
    })?;
    Ok(outcome)
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

/// Connect to `dsn` and install the reference schema in one transaction (see
/// [`install_with`]).
///
/// # Errors
/// [`InstallError`].
pub fn install(
    dsn: &Dsn,
    schema: &SchemaName,
    role: &str,
    force: bool,
) -> Result<Installed, InstallError> {
    check(schema, role)?;
    with_client(dsn, async |client| {
        install_with(client, dsn, schema, role, force).await
    })
}

/// Compare the installed schema with the reference; changes nothing. The reference it compares
/// with is installed into a scratch schema inside a transaction that is always rolled back, so
/// on a database whose default is read-only (`default_transaction_read_only`) that transaction
/// is opened `READ WRITE` explicitly: nothing it writes is ever committed. A hot standby can
/// hold no such transaction: it is refused in one line (compare on the primary, which the
/// standby replays).
///
/// # Errors
/// [`InstallError`].
pub fn status(dsn: &Dsn, schema: &SchemaName, role: &str) -> Result<Status, InstallError> {
    check(schema, role)?;
    with_client(dsn, async |client| {
        let standby: bool = client
            .query_one("SELECT pg_catalog.pg_is_in_recovery()", &[])
            .await
            .map_err(db_err(dsn, "reading pg_is_in_recovery()"))?
            .get(0);
        if standby {
            return Err(InstallError::Standby {
                dsn: dsn.redacted(),
            });
        }
        let tx = client
            .build_transaction()
            .read_only(false)
            .start()
            .await
            .map_err(db_err(dsn, "BEGIN READ WRITE"))?;
        let status = compare(&tx, dsn, schema, role).await;
        // Dropping the transaction rolls it back: the scratch reference never commits.
        drop(tx);
        let status = status?;
        // Released Awa differs from the reference in every object: say what it is instead.
        let Status::Different {
            differs,
            missing,
            others,
        } = status
        else {
            return Ok(status);
        };
        let released = crate::contract::released::detect(client, schema.as_str())
            .await
            .map_err(db_err(dsn, "recognising released Awa"))?;
        Ok(match released {
            Some(released) => Status::ReleasedAwa {
                released,
                differs,
                missing,
                others,
            },
            None => Status::Different {
                differs,
                missing,
                others,
            },
        })
    })
}

/// What `uninstall` removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    /// Functions, tables and types, by identity.
    pub objects: Vec<String>,
    /// Whether the schema itself was removed.
    pub schema: bool,
    /// Whether the producer role was removed; `Some(reason)` when it was kept.
    pub role: Result<bool, String>,
}

/// Remove exactly what `schema install` created (objects carrying [`MARK`]), in one
/// transaction, after checking that none of them was replaced by a different definition.
/// The schema and the role go only when install created them and nothing else uses them.
///
/// # Errors
/// [`InstallError::Differs`] when a marked object differs from the reference, or a server
/// error (e.g. something outside the schema depends on an object), nothing changed.
pub fn uninstall(dsn: &Dsn, schema: &SchemaName, role: &str) -> Result<Removed, InstallError> {
    check(schema, role)?;
    with_client(dsn, async |client| {
        let tx = client.transaction().await.map_err(db_err(dsn, "BEGIN"))?;
        let status = compare(&tx, dsn, schema, role).await?;
        let marked: Vec<(String, String)> = objects(&tx, dsn, schema.as_str())
            .await?
            .into_iter()
            .filter(|o| o.2)
            .map(|o| (o.0, o.1))
            .collect();
        if let Status::Different { differs, .. } = &status {
            let replaced: Vec<String> = differs
                .iter()
                .filter(|d| marked.iter().any(|(_, id)| d.contains(id.as_str())))
                .cloned()
                .collect();
            if !replaced.is_empty() {
                return Err(InstallError::Differs {
                    schema: schema.as_str().to_owned(),
                    differences: replaced,
                });
            }
        }
        let mut removed = Removed {
            objects: Vec::new(),
            schema: false,
            role: Ok(false),
        };
        // Tables first: a table's trigger depends on its trigger function (007).
        for kind in ["TABLE", "FUNCTION", "TYPE"] {
            let ids: Vec<&str> = marked
                .iter()
                .filter(|(k, _)| k == kind)
                .map(|(_, id)| id.as_str())
                .collect();
            if !ids.is_empty() {
                tx.batch_execute(&format!("DROP {kind} {}", ids.join(", ")))
                    .await
                    .map_err(db_err(dsn, "schema uninstall"))?;
                removed
                    .objects
                    .extend(ids.iter().map(|id| format!("{} {id}", kind.to_lowercase())));
            }
        }
        let (_, schema_marked, role_exists, role_marked) =
            marks(&tx, dsn, schema.as_str(), role).await?;
        if schema_marked {
            // RESTRICT: objects install did not create stay, and so does the schema.
            let drop = format!("DROP SCHEMA {} RESTRICT", schema.quoted());
            removed.schema = in_savepoint(&tx, dsn, "awa_conformance_schema", &drop)
                .await?
                .is_ok();
        }
        if !removed.schema && role_exists {
            // The schema stays: take back the grant install made on it.
            tx.batch_execute(&format!(
                "REVOKE USAGE ON SCHEMA {} FROM {}",
                schema.quoted(),
                quote_ident(role)
            ))
            .await
            .map_err(db_err(dsn, "schema uninstall"))?;
        }
        if role_marked {
            let drop = format!("DROP ROLE {}", quote_ident(role));
            // Roles are cluster-wide: another database's install may still use it.
            removed.role = in_savepoint(&tx, dsn, "awa_conformance_role", &drop)
                .await?
                .map(|()| true)
                .map_err(|e| crate::pg::describe_error(dsn, &e));
        }
        // The bounded owner goes like the producer role: only when install created it and no
        // other install (this database or another) still uses it.
        let owner = owner_role(role);
        if let (true, true) = role_mark(&tx, dsn, &owner).await? {
            let revoke = if removed.schema {
                String::new()
            } else {
                format!(
                    "REVOKE ALL ON SCHEMA {} FROM {};",
                    schema.quoted(),
                    quote_ident(&owner)
                )
            };
            let drop = format!("{revoke} DROP ROLE {}", quote_ident(&owner));
            // Still used by another install: it stays, which is not an error.
            let _kept = in_savepoint(&tx, dsn, "awa_conformance_owner", &drop).await?;
        }
        tx.commit().await.map_err(db_err(dsn, "COMMIT"))?;
        Ok(removed)
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_name("awa"));
        assert!(valid_name("_Awa_2"));
        assert!(!valid_name(""));
        assert!(!valid_name("2awa"));
        assert!(!valid_name("a-b"));
        assert!(!valid_name("a\"b"));
        assert!(!valid_name(&"a".repeat(64)));
        assert!(valid_name(&"a".repeat(63)));
    }

    fn name(s: &str) -> SchemaName {
        SchemaName::new(s).unwrap()
    }

    #[test]
    fn substitution_replaces_every_token_and_nothing_else() {
        let text = print(&name("conf_x"), "prod_y").unwrap();
        assert!(!text.contains("@schema@"));
        assert!(!text.contains("@producer_role@"));
        assert!(text.contains("\"conf_x\".insert_job"));
        assert!(text.contains("\"prod_y\""));
        // The message prefix is a contract constant, never substituted.
        assert!(text.contains("awa.insert_job: "));
        assert!(print(&name("s"), "bad'role").is_err());
    }

    #[test]
    fn schema_names_are_the_runner_s_with_only_what_the_files_cannot_carry_refused() {
        // Mixed case, spaces and double quotes are quoted like any identifier.
        let text = print(&name("Awa \"Odd\" Mixed"), "awa_producer").unwrap();
        assert!(text.contains("\"Awa \"\"Odd\"\" Mixed\".insert_job"));
        assert!(text.contains("'\"Awa \"\"Odd\"\" Mixed\".queue_meta'::regclass"));
        for bad in ["a'b", "a%I", "a$fn$b", "a\nb", "a\rb"] {
            let err = print(&name(bad), "awa_producer").unwrap_err();
            assert!(
                matches!(err, InstallError::UnsupportedSchema { .. }),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn substitution_is_one_pass() {
        // A schema name holding the role token is not substituted a second time.
        let out = substitute(
            "@schema@.f TO @producer_role@ @x",
            &name("s@producer_role@"),
            "r",
        );
        assert_eq!(out, "\"s@producer_role@\".f TO \"r\" @x");
    }

    #[test]
    fn status_details_are_bounded_and_counted() {
        let status = Status::Different {
            differs: vec!["table a".to_owned()],
            missing: (0..30).map(|i| format!("function f{i}()")).collect(),
            others: vec!["table z".to_owned()],
        };
        let schema = name("awa");
        let short = status.report(&schema, Some(STATUS_DETAIL_LINES));
        assert_eq!(
            short.lines().count(),
            1 + STATUS_DETAIL_LINES + 1,
            "{short}"
        );
        assert!(
            short.ends_with(
                "  ... and 12 more (1 differ, 30 missing, 1 not in the reference); \
                 schema status --all lists every one\n"
            ),
            "{short}"
        );
        let all = status.report(&schema, None);
        assert_eq!(all.lines().count(), 1 + 32, "{all}");
        assert_eq!(status.exit_code(), crate::exit::SCHEMA_DIFFERS);
        assert_eq!(Status::Missing.exit_code(), crate::exit::SUCCESS);
        assert_eq!(
            Status::Same { others: vec![] }.exit_code(),
            crate::exit::SUCCESS
        );
    }
}
