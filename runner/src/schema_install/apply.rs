//! The two commands that change the database: `schema install` applies the reference in one
//! transaction and marks what it creates, and `schema uninstall` removes exactly what carries
//! that mark.
//!
//! Both compare with the reference first ([`compare`](super::compare)): install replaces a
//! different implementation only when forced, and uninstall never removes a marked object whose
//! definition was changed since.

use super::catalog::{marks, objects, role_mark};
use super::compare::{compare, Status};
use super::reference::{check, owner_role, substituted};
use super::{db_err, with_client, InstallError, MARK};
use crate::pg::{quote_ident, Dsn, SchemaName};

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
    tx.execute(include_str!("../../sql/install_lock.sql"), &[&role])
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
