//! Preflight (abort the run on a missing or wrong schema) and `sql::catalog::*` cases.
//!
//! Preflight checks only what every other case depends on: the schema, exactly one
//! `insert_job` with the ADR 0001 D7 signature (last argument `p_opts jsonb`) and result
//! shape, `contract_version() = 1` and `contract_capabilities()` listing `contract_1_1` (the
//! revision this kit tests, ADR 0025: a v1.0 database returns raw keys from `job_routing`, so
//! it is refused with the fix rather than run into a cascade of failures). The hardening rules
//! of ADR-043 (SECURITY DEFINER, the exact search_path, no PUBLIC EXECUTE, a bounded owner) are
//! cases: a schema that breaks them is nonconformant, not unusable. So is a capability list
//! that lacks part of the mandatory core (`core_capabilities`, docs/contract.md §12.1).
//!
//! A schema without `insert_job` that is released Awa (see [`super::compat`]) is not refused:
//! preflight returns a setup for the compat profile instead (ADR 0044).

use crate::pg::SqlText;
use std::sync::Arc;

use serde_json::json;
use tokio_postgres::Client;

use super::case::{query_fail, rolled_back, Case};
use crate::contract::call::{ROUTING_COLUMNS, STORED_COLUMNS};
use crate::contract::preflight::{columns_match, pair_list, procs, return_columns};
use crate::contract::target::DbSetup;
use crate::outcome::{CaseFailure, Verdict};
use crate::pg::quote_ident;

/// Run a catalog query on a pooled connection (rolled back; catalog reads change nothing).
fn catalog<T>(
    db: &Arc<DbSetup>,
    f: impl AsyncFnOnce(&Client) -> Result<T, CaseFailure>,
) -> Result<T, CaseFailure> {
    rolled_back(db, f)
}

fn regprocedure(db: &DbSetup, name: &str) -> String {
    format!("{}.{name}", db.schema.quoted())
}

/// `(prosecdef, proconfig, public_can_execute)` of the single function `name`.
async fn hardening(
    client: &Client,
    db: &DbSetup,
    name: &str,
) -> Result<(bool, Vec<String>, bool), CaseFailure> {
    let row = client
        .query_one(
            include_str!("../../../sql/hardening.sql"),
            &[&db.schema.as_str(), &name],
        )
        .await
        .map_err(|e| {
            query_fail(
                db,
                &format!("reading pg_proc for {}", regprocedure(db, name)),
                &e,
            )
        })?;
    Ok((row.get(0), row.get(1), row.get(2)))
}

/// The `search_path` a function sets, as a list of unquoted entries.
fn search_path(config: &[String]) -> Option<Vec<String>> {
    config
        .iter()
        .find_map(|c| c.strip_prefix("search_path=").map(split_identifiers))
}

/// Split a stored identifier list (`pg_catalog, "Awa ""Odd"", x", pg_temp`) as the server
/// reads it (SplitIdentifierString): commas outside double quotes separate entries, `""`
/// inside quotes is one `"`, unquoted entries are trimmed and folded to lower case. A name
/// holding a comma or a double quote is therefore one entry, compared exactly.
fn split_identifiers(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = list.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut entry = String::new();
        if chars.next_if_eq(&'"').is_some() {
            while let Some(c) = chars.next() {
                if c == '"' && chars.next_if_eq(&'"').is_none() {
                    break;
                }
                entry.push(c);
            }
            while chars.next_if(|c| *c != ',').is_some() {}
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                entry.push(c);
            }
            entry = entry.trim_end().to_ascii_lowercase();
        }
        out.push(entry);
        if chars.next().is_none() {
            return out;
        }
    }
}

/// `<function>_owner_bounded`: the function runs as a dedicated NOLOGIN role with no role
/// attributes and no memberships, which the producer role cannot act as (ADR-043; docs/adr
/// 0033).
async fn owner_bounded(
    client: &Client,
    db: &DbSetup,
    function: &str,
) -> Result<Verdict, CaseFailure> {
    let row = client
        .query_one(
            include_str!("../../../sql/function_owner.sql"),
            &[&db.schema.as_str(), &function, &db.producer_role],
        )
        .await
        .map_err(|e| {
            query_fail(
                db,
                &format!("reading the owner of {}", regprocedure(db, function)),
                &e,
            )
        })?;
    let get_bool = |i: usize| -> Result<bool, CaseFailure> {
        row.try_get(i)
            .map_err(|e| CaseFailure::harness(format!("function_owner column {i}: {e}")))
    };
    let owner: String = row
        .try_get(0)
        .map_err(|e| CaseFailure::harness(format!("function_owner owner: {e}")))?;
    let member_of: Vec<String> = row
        .try_get(7)
        .map_err(|e| CaseFailure::harness(format!("function_owner memberships: {e}")))?;
    let got = json!({
        "login": get_bool(1)?,
        "superuser": get_bool(2)?,
        "createrole": get_bool(3)?,
        "createdb": get_bool(4)?,
        "replication": get_bool(5)?,
        "bypassrls": get_bool(6)?,
        "member_of": member_of,
        "producer_role_can_act_as_owner": get_bool(8)?,
    });
    let want = json!({
        "login": false, "superuser": false, "createrole": false, "createdb": false,
        "replication": false, "bypassrls": false, "member_of": [],
        "producer_role_can_act_as_owner": false,
    });
    if got == want {
        return Ok(Verdict::Passed);
    }
    Err(CaseFailure::mismatch(
        format!(
            "{} is owned by {}, which is not a bounded owner: ADR-043 asks for a dedicated \
             NOLOGIN role without SUPERUSER, CREATEROLE, CREATEDB, REPLICATION or BYPASSRLS, \
             member of no role, that the producer role cannot act as (`ALTER FUNCTION ... \
             OWNER TO` such a role; the reference install creates awa_owner)",
            regprocedure(db, function),
            quote_ident(&owner)
        ),
        want,
        got,
    ))
}

pub(super) fn hardening_cases(function: &'static str) -> Vec<Case> {
    vec![
        Case::new(
            "catalog",
            &format!("{function}_security_definer"),
            move |db| {
                let (secdef, _, _) = catalog(&db, async |c| hardening(c, &db, function).await)?;
                if secdef {
                    Ok(Verdict::Passed)
                } else {
                    Err(CaseFailure::mismatch(
                        format!(
                            "{} is SECURITY INVOKER; ADR-043 requires a hardened SECURITY DEFINER \
                         function (producers get no table privileges)",
                            regprocedure(&db, function)
                        ),
                        json!({"prosecdef": true}),
                        json!({"prosecdef": false}),
                    ))
                }
            },
        ),
        Case::new("catalog", &format!("{function}_search_path"), move |db| {
            let (_, config, _) = catalog(&db, async |c| hardening(c, &db, function).await)?;
            // docs/contract.md §10 gives the exact list: nothing a caller can create into
            // (public, $user) may stand between the trusted schemas.
            let want = vec![
                "pg_catalog".to_owned(),
                db.schema.as_str().to_owned(),
                "pg_temp".to_owned(),
            ];
            if search_path(&config).as_ref() == Some(&want) {
                Ok(Verdict::Passed)
            } else {
                Err(CaseFailure::mismatch(
                    format!(
                        "{} must SET search_path = pg_catalog, {}, pg_temp exactly (ADR-043), \
                         so callers cannot shadow objects",
                        regprocedure(&db, function),
                        db.schema.quoted()
                    ),
                    json!({"search_path": want}),
                    json!({"proconfig": config}),
                ))
            }
        }),
        Case::new("catalog", &format!("{function}_owner_bounded"), move |db| {
            catalog(&db, async |c| owner_bounded(c, &db, function).await)
        }),
        Case::new(
            "catalog",
            &format!("{function}_no_public_execute"),
            move |db| {
                let (_, _, public) = catalog(&db, async |c| hardening(c, &db, function).await)?;
                if public {
                    Err(CaseFailure::mismatch(
                        format!(
                        "PUBLIC can EXECUTE {}: revoke it in the creating transaction and grant \
                         EXECUTE to the producer role only (ADR-043)",
                        regprocedure(&db, function)
                    ),
                        json!({"public_execute": false}),
                        json!({"public_execute": true}),
                    ))
                } else {
                    Ok(Verdict::Passed)
                }
            },
        ),
    ]
}

/// The `sql::catalog::*` cases.
/// `<function>_signature`: exactly one `<schema>.<function>(p_job_id bigint)` returning one
/// row of `columns`, names and types in order (the read functions `job_routing` and
/// `job_stored`); needs the capability of the same name.
fn read_signature(
    function: &'static str,
    columns: &'static [(&'static str, &'static str)],
    source: &'static str,
) -> Case {
    Case::new("catalog", &format!("{function}_signature"), move |db| {
        catalog(&db, async |c| {
            let ns: u32 = c
                .query_one("SELECT oid FROM pg_namespace WHERE nspname = $1", &[&db.schema.as_str()])
                .await
                .map_err(|e| query_fail(&db, "pg_namespace", &e))?
                .get(0);
            let found = procs(c, ns, function)
                .await
                .map_err(|e| query_fail(&db, "pg_proc", &e))?;
            let [p] = found.as_slice() else {
                return Err(CaseFailure::new(format!(
                    "expected exactly one {}.{function}, found {}",
                    db.schema.quoted(),
                    found.len()
                )));
            };
            let cols = return_columns(c, p.ret)
                .await
                .map_err(|e| query_fail(&db, "pg_attribute", &e))?;
            let args_ok = p.arg_names == ["p_job_id"] && p.arg_types == ["bigint"] && p.all_in;
            if args_ok && !p.retset && columns_match(&cols, columns) {
                Ok(Verdict::Passed)
            } else {
                Err(CaseFailure::mismatch(
                    format!("{function} signature differs from {source}"),
                    json!({
                        "args": "p_job_id bigint",
                        "returns": columns.iter().map(|(n, t)| format!("{n} {t}")).collect::<Vec<_>>(),
                    }),
                    json!({
                        "args": pair_list(&p.arg_names, &p.arg_types),
                        "returns": cols.iter().map(|(n, t)| format!("{n} {t}")).collect::<Vec<_>>(),
                        "oid": p.oid,
                    }),
                ))
            }
        })
    })
    .requires(function)
}

pub(super) fn cases() -> Vec<Case> {
    let mut out = hardening_cases("insert_job");
    out.extend(
        hardening_cases("job_routing")
            .into_iter()
            .map(|c| c.requires("job_routing")),
    );
    // No `contract_version` case: preflight reads `contract_version()` before any case runs
    // and stops the run with exit 5 on anything but v1, so such a case could never fail.
    out.push(Case::new("catalog", "core_capabilities", |db| {
        let missing = super::levels::missing_core(&db.capabilities);
        if missing.is_empty() {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!(
                "{}.contract_capabilities() lacks the mandatory {}: every database must have \
                 and advertise the core (docs/contract.md §12); the core's cases ran anyway",
                db.schema.quoted(),
                missing.join(", ")
            ),
            json!(super::levels::CORE),
            json!(db.capabilities),
        ))
    }));
    out.push(Case::new("catalog", "capabilities_sorted_unique", |db| {
        let caps = &db.capabilities;
        let mut sorted = caps.clone();
        sorted.sort();
        sorted.dedup();
        if &sorted == caps {
            Ok(Verdict::Passed)
        } else {
            Err(CaseFailure::mismatch(
                "contract_capabilities() must be sorted without duplicates",
                json!(sorted),
                json!(caps),
            ))
        }
    }));
    out.push(read_signature(
        "job_routing",
        &ROUTING_COLUMNS,
        "ADR 0001 D7",
    ));
    out.extend(
        hardening_cases("job_stored")
            .into_iter()
            .map(|c| c.requires("job_stored")),
    );
    out.push(read_signature("job_stored", &STORED_COLUMNS, "ADR 0052"));
    out.push(Case::new("catalog", "revision_1_2_has_job_stored", |db| {
        let has = |c: &str| db.capabilities.iter().any(|a| a == c);
        if !has("contract_1_2") || has("job_stored") {
            return Ok(Verdict::Passed);
        }
        Err(CaseFailure::mismatch(
            format!(
                "{}.contract_capabilities() lists contract_1_2 without job_stored: revision 1.2 \
                 is the whole stored job read back (docs/contract.md §15); add job_stored, or \
                 drop contract_1_2",
                db.schema.quoted()
            ),
            json!(["contract_1_2", "job_stored"]),
            json!(db.capabilities),
        ))
    }));
    out.push(Case::new("catalog", "producer_role_grants", |db| {
        catalog(&db, async |c| {
            let row = c
                .query_opt(
                    &include_str!("../../../sql/producer_can_execute_insert_job.sql")
                        .in_schema(db.schema.quoted()),
                    &[&db.producer_role],
                )
                .await
                .map_err(|e| query_fail(&db, "has_function_privilege", &e))?;
            match row.map(|r| r.get::<_, bool>(0)) {
                Some(true) => Ok(Verdict::Passed),
                Some(false) => Err(CaseFailure::new(format!(
                    "producer role {} cannot EXECUTE {}.insert_job: GRANT EXECUTE on the exact \
                     regprocedure to it",
                    quote_ident(&db.producer_role),
                    db.schema.quoted()
                ))),
                None => Err(CaseFailure::new(format!(
                    "producer role {} does not exist: install the schema, or pass \
                     --producer-role naming the role that holds EXECUTE on insert_job",
                    quote_ident(&db.producer_role)
                ))),
            }
        })
    }));
    out.push(Case::new("catalog", "insert_job_defaults", |db| {
        catalog(&db, async |c| {
            // Only p_kind given: D7 defaults (queue 'default', priority 2, available, rotor).
            let row = c
                .query_one(
                    &include_str!("../../../sql/insert_job_defaults.sql")
                        .in_schema(db.schema.quoted()),
                    &[],
                )
                .await
                .map_err(|e| query_fail(&db, "insert_job('awa_conformance')", &e))?;
            let cell = |i: usize| -> Result<Option<String>, CaseFailure> {
                row.try_get::<_, Option<String>>(i)
                    .map_err(|e| CaseFailure::new(format!("insert_job result column {i}: {e}")))
            };
            let priority: Option<i16> = row
                .try_get(2)
                .map_err(|e| CaseFailure::new(format!("insert_job result priority: {e}")))?;
            let shard: Option<i16> = row
                .try_get(5)
                .map_err(|e| CaseFailure::new(format!("insert_job result enqueue_shard: {e}")))?;
            let width: i16 = row
                .try_get(6)
                .map_err(|e| CaseFailure::harness(format!("queue_meta width: {e}")))?;
            let got = json!({
                "queue": cell(0)?,
                "state": cell(1)?,
                "priority": priority,
                "route_source": cell(3)?,
                "digest_is_null": row.try_get::<_, Option<bool>>(4).ok().flatten(),
                "shard_in_range": shard.is_some_and(|s| (0..width).contains(&s)),
            });
            let want = json!({
                "queue": "default", "state": "available", "priority": 2,
                "route_source": "rotor", "digest_is_null": true, "shard_in_range": true,
            });
            if got == want {
                Ok(Verdict::Passed)
            } else {
                Err(CaseFailure::mismatch(
                    "insert_job with only p_kind: D7 defaults",
                    want,
                    got,
                ))
            }
        })
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::split_identifiers;

    #[test]
    fn identifier_lists_split_as_the_server_reads_them() {
        assert_eq!(
            split_identifiers("pg_catalog, \"Awa \"\"Odd\"\", x\", pg_temp"),
            ["pg_catalog", "Awa \"Odd\", x", "pg_temp"]
        );
        assert_eq!(
            split_identifiers("pg_catalog, \"AwaMixed\",Pg_Temp "),
            ["pg_catalog", "AwaMixed", "pg_temp"]
        );
        assert_eq!(split_identifiers("awa"), ["awa"]);
    }
}
