//! How an installed schema compares with the reference: the [`Status`] that `schema status`
//! ([`status`]) reports and `install`/`uninstall` decide by, and the comparison itself.
//!
//! The reference is installed into a scratch schema inside the caller's transaction and rolled
//! back to a savepoint, so the comparison is between two catalogs of the same server, object by
//! object, and changes nothing.

use super::catalog::{pin_search_path, snapshot, Snapshot};
use super::reference::{check, owner_role, substituted};
use super::{db_err, with_client, InstallError};
use crate::contract::released::Released;
use crate::pg::{Dsn, SchemaName};

/// How many detail lines `schema status` prints before it summarises the rest.
pub const STATUS_DETAIL_LINES: usize = 20;

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
pub(super) async fn compare(
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
                include_str!("../../sql/install_missing_privileges.sql"),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> SchemaName {
        SchemaName::new(s).unwrap()
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
