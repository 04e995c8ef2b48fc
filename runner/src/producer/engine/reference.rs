//! The engine's reference: what it checks against (the contract's `insert_job`, or released
//! Awa's `insert_job_compat`), why a case cannot be checked on released Awa, and the
//! reference call itself, in a rolled-back transaction.
//!
//! A submodule of the engine so that it shares the session's private state (the runner's
//! connection, the target) without widening it.

use super::*;
use crate::contract::call::CompatCall;
use crate::contract::judge::{Records, Rejection};

/// What the engine checks against: the contract's `insert_job`, or released Awa's
/// `insert_job_compat` (the compat profile, docs/released-awa.md).
#[derive(Debug, Clone)]
pub(super) enum Target {
    /// `insert_job` is the reference; `job_routing` reads the stored job.
    Contract,
    /// Released Awa under queue storage: `insert_job_compat` is the reference; the stored job
    /// is read from queue storage (the quoted schema).
    Released { storage: String },
    /// Released Awa on the canonical engine, which keeps no enqueue shard: every case is not
    /// applicable, with this reason.
    Unreadable(String),
}

impl Target {
    pub(super) fn of(db: &DbSetup) -> Self {
        match &db.compat {
            None => Self::Contract,
            Some(_) => match db.storage() {
                Ok(Ok(storage)) => Self::Released { storage },
                Ok(Err(why)) | Err(crate::outcome::CaseFailure { message: why, .. }) => {
                    Self::Unreadable(why)
                }
            },
        }
    }

    pub(super) fn records(&self) -> Records {
        match self {
            Self::Contract => Records::CONTRACT,
            Self::Released { .. } | Self::Unreadable(_) => Records::RELEASED,
        }
    }
}

/// Why `case` cannot be checked on `target`, from what it needs; `None`: it can.
pub(super) fn target_lacks(target: &Target, case: &Case) -> Option<String> {
    const NO_CONCURRENCY: &str = "released Awa has no concurrency key (no digest, no \
        concurrency shard); it arrives with awa.insert_job";
    match target {
        Target::Contract => None,
        Target::Unreadable(why) => Some(why.clone()),
        Target::Released { .. } => case.needs().iter().find_map(|need| {
            let why = match need {
                Need::Bulk => {
                    "released Awa has no staged bulk path (bulk_staging, publish_batch: \
                     contract §14 arrives with awa.insert_job)"
                }
                Need::ConcurrencyKey => NO_CONCURRENCY,
                Need::KeyLimit => {
                    "released Awa sets no key length limit (ZA003 key_too_long arrives with \
                     awa.insert_job)"
                }
                Need::TextUniqueStates => {
                    "released insert_job_compat takes unique_states as bit(8), and a text bit \
                     string of another length is padded or truncated, never refused (22026 \
                     arrives with awa.insert_job)"
                }
                Need::Errors => return None,
            };
            Some(why.to_owned())
        }),
    }
}

impl Session {
    /// The reference call in a rolled-back transaction: `insert_job`, or on released Awa
    /// `insert_job_compat` (bound as the released SDKs bind it) with the job read back from
    /// queue storage before the rollback.
    pub(super) fn reference(
        &self,
        inner: &mut Inner,
        call: &InsertJob,
    ) -> Result<Result<Observed, Rejection>, CaseFailure> {
        let storage = self.storage()?;
        let sql = match storage {
            None => call::insert_sql(&self.db),
            Some(_) => call::compat_insert_sql(&self.db),
        };
        let conn = self.conn(inner)?;
        let client = conn.client;
        let result = self
            .db
            .pg
            .block_on(async {
                // A statement that cannot be prepared (no insert_job) is the reference's
                // answer, as a failed call would be: prepared outside the transaction, once.
                let st = match conn.statement(&sql).await {
                    Ok(st) => st,
                    Err(e) => return Ok(Err(e)),
                };
                match storage {
                    // BEGIN, the call and ROLLBACK pipelined: one round trip, run in this order
                    // (each is sent on its first poll, and join3 polls them in order).
                    None => {
                        // The reference is called as the producer's sessions call it
                        // (docs/contract.md §12.4): a session-dependent insert_job is the
                        // database's finding, before the producer's answer is judged.
                        let begin = self
                            .db
                            .caller_settings_local()
                            .map_or_else(|| "BEGIN".to_owned(), |s| format!("BEGIN; {s}"));
                        let (begun, observed, rolled_back) = futures_util::future::join3(
                            client.batch_execute(&begin),
                            async { call::insert(client, &st, call).await.map(|i| i.returned) },
                            client.batch_execute("ROLLBACK"),
                        )
                        .await;
                        begun
                            .map_err(|e| self.db_err("BEGIN", &e))
                            .and(rolled_back.map_err(|e| self.db_err("ROLLBACK", &e)))
                            .map(|()| observed)
                    }
                    Some(storage) => {
                        async {
                            client
                                .batch_execute("BEGIN")
                                .await
                                .map_err(|e| self.db_err("BEGIN", &e))?;
                            let observed = async {
                                let ret =
                                    call::compat_insert(client, &st, &CompatCall::of(call)).await?;
                                call::released_job(client, storage, ret.job_id).await
                            }
                            .await;
                            client
                                .batch_execute("ROLLBACK")
                                .await
                                .map_err(|e| self.db_err("ROLLBACK", &e))?;
                            Ok(observed)
                        }
                        .await
                    }
                }
            })
            .map_err(|e| CaseFailure::harness(e.to_string()))?;
        match result? {
            Ok(o) => Ok(Ok(o)),
            Err(e) => match Rejection::of(&e) {
                Some(r) => Ok(Err(r)),
                None => Err(self.db_err("the reference insert_job call", &e)),
            },
        }
    }

    /// The quoted queue-storage schema on released Awa, `None` on a contract database.
    pub(super) fn storage(&self) -> Result<Option<&str>, CaseFailure> {
        match &self.target {
            Target::Contract => Ok(None),
            Target::Released { storage } => Ok(Some(storage)),
            // `not_applicable` keeps every case of such a session from running.
            Target::Unreadable(why) => Err(CaseFailure::harness(why.clone())),
        }
    }
}
