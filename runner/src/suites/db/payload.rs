//! `sql::payload::*` (contract revision 1.2, ADR 0052): requests whose payload a careless
//! `insert_job` would change, each read back whole through `job_stored` and judged field by
//! field by the one payload rule (`contract::judge::judge_payload`, through
//! `insert_and_read_all`), against what PostgreSQL's own types make of the request.
//!
//! * `sql::payload::<canonical_json id>`: the vector's canonical JSON as args (every float,
//!   integer and string edge of canonical JSON), with a mixed-case non-ASCII kind, tags in an
//!   order that is not sorted (non-ASCII included), metadata holding a null, a big integer and
//!   a trailing-zero decimal, max_attempts 7, priority 3, and, for every other vector, a
//!   run_at with a UTC offset and microseconds (the rest take the default, now);
//! * `sql::payload::defaults`: every argument but the kind an explicit NULL, so each default
//!   (queue `default`, args and metadata `{}`, no tags, priority 2, 25 attempts, run_at now)
//!   is what is stored.
//!
//! Every other SQL case's jobs are judged whole too (same rule), with the suites' plain
//! payload; these cases are the ones that exercise it.

use crate::pg::SqlText;
use awa_conformance_vectors::{Case as VCase, VectorSet};

use super::case::{query_fail, rolled_back, Case};
use super::request::{insert_and_read_all, unique_name, InsertJob, Rows};
use crate::contract::call;
use crate::contract::expect::Payload;
use crate::contract::judge::{judge_payload, rejection};
use crate::outcome::{CaseFailure, Verdict};

/// The kind every payload case sends (shared with `producer::payload::*`).
pub(super) const PAYLOAD_KIND: &str = exercise::KIND;
use crate::contract::expect::exercise::{self, MAX_ATTEMPTS, METADATA, PRIORITY, RUN_AT, TAGS};

/// The `sql::payload::*` cases.
pub(super) fn cases(vectors: &VectorSet) -> Vec<Case> {
    let mut out: Vec<Case> = vectors
        .iter()
        .filter_map(|(_, v)| match &v.case {
            VCase::CanonicalJson(c) => Some((v.id.clone(), c.canonical_text.clone())),
            _ => None,
        })
        .enumerate()
        .map(|(i, (id, args))| {
            Case::new("payload", &id, move |db| {
                rolled_back(&db, async |client| {
                    let mut r = InsertJob::new(PAYLOAD_KIND, &unique_name(&db))
                        .payload(&args, MAX_ATTEMPTS, METADATA, &TAGS)
                        .priority(PRIORITY);
                    if i % 2 == 0 {
                        r = r.run_at(RUN_AT);
                    }
                    if args.contains(r"\u0000") {
                        // jsonb cannot hold U+0000: PostgreSQL's own jsonb input refuses the
                        // args (22P05), and nothing may be stored in its place (docs/contract.md
                        // §15). The error aborts the transaction, so no row can remain.
                        let st = client
                            .prepare(&call::insert_sql(&db))
                            .await
                            .map_err(|e| query_fail(&db, "preparing insert_job", &e))?;
                        let refused = rejection(
                            &db,
                            "args holding \\u0000",
                            call::insert(client, &st, &r).await,
                        )?;
                        return if refused.sqlstate == "22P05" {
                            Ok(Verdict::Passed)
                        } else {
                            Err(CaseFailure::at(
                                crate::outcome::Layer::Payload,
                                format!(
                                    "args holding \\u0000 must be refused as jsonb refuses \
                                     them (22P05), got {} {}",
                                    refused.sqlstate, refused.message
                                ),
                                serde_json::json!({"sqlstate": "22P05"}),
                                refused.to_json(),
                            ))
                        };
                    }
                    insert_and_read_all(client, &db, &[r], Rows::Counted).await?;
                    Ok(Verdict::Passed)
                })
            })
            .requires("job_stored")
        })
        .collect();
    out.push(
        Case::new("payload", "defaults", |db| {
            rolled_back(&db, async |client| {
                let from = call::clock(client)
                    .await
                    .map_err(|e| query_fail(&db, "reading the server's clock", &e))?;
                let job_id: i64 = client
                    .query_one(
                        &include_str!("../../../sql/insert_job_nulls.sql")
                            .in_schema(db.schema.quoted()),
                        &[],
                    )
                    .await
                    .map_err(|e| query_fail(&db, "insert_job with every default", &e))?
                    .try_get(0)
                    .map_err(|e| query_fail(&db, "insert_job's job_id", &e))?;
                let st = client
                    .prepare(&call::stored_sql_in(db.schema.quoted()))
                    .await
                    .map_err(|e| query_fail(&db, "preparing job_stored", &e))?;
                let got = call::stored(client, &st, job_id)
                    .await
                    .map_err(|e| query_fail(&db, &format!("job_stored({job_id})"), &e))?;
                let to = call::clock(client)
                    .await
                    .map_err(|e| query_fail(&db, "reading the server's clock", &e))?;
                // The request as its defaults spell it: what every NULL must mean.
                let defaults = InsertJob::new("awa_conformance", "default");
                let want = Payload::asked(
                    &defaults,
                    (defaults.args.clone(), defaults.metadata.clone(), None),
                    (&from, &to),
                );
                judge_payload("insert_job", &want, &got).map_err(|f| CaseFailure {
                    message: format!("every argument NULL but the kind: {}", f.message),
                    ..f
                })?;
                Ok(Verdict::Passed)
            })
        })
        .requires("job_stored"),
    );
    out
}
