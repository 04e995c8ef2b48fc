//! The engine's read-back of what a case stored: the job through `job_routing` (or released
//! Awa's queue storage), the whole job through `job_stored` with what the server makes of the
//! payload asked (revision 1.2), and the job rows a case left (the row-count rule).
//!
//! A submodule of the engine so that it shares the session's private state (the runner's
//! connection, the target) without widening it.

use super::*;
use crate::pg::SqlText;

/// The job read whole through `job_stored` and the clock after the read, or why it could not
/// be read.
pub(super) type Whole = Result<(Stored, String), CaseFailure>;

impl Session {
    /// The row-count rule after a plan that passed: the case's queues, and every row the
    /// run's own login wrote anywhere, hold one job per accepted request (none for a refused
    /// one). On a contract database only: released Awa spreads a job over lanes and
    /// tables of its own, so there the count is not made (docs/contract.md says so).
    pub(super) fn count_rows(
        &self,
        inner: &mut Inner,
        plan: &Plan,
        scope: &str,
        verdict: Verdict,
    ) -> Result<Verdict, CaseFailure> {
        if !matches!(verdict, Verdict::Passed) || !matches!(self.target, Target::Contract) {
            return Ok(verdict);
        }
        let asked = plan
            .steps
            .iter()
            .filter(|s| matches!(s.outcome, Outcome::Stored(_)))
            .count();
        if !inner.alone {
            return self.count_beside(inner, asked, scope).map(|()| verdict);
        }
        let jobs = JobScope {
            queues: &[],
            prefix: Some(scope),
            login: self.login.run_scoped.as_deref(),
        };
        let (conn, tables) = self.client_and_tables(inner)?;
        let found = self
            .db
            .pg
            .block_on(count_jobs_with(conn, &self.db, tables, jobs))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| CaseFailure::harness(format!("counting the case's job rows: {e}")))?;
        judge::row_count(asked, found, "the producer")?;
        Ok(verdict)
    }

    /// The row-count rule for a case run beside others (ADR 0057): its own rows (its queues,
    /// its answered ids) hold one job per accepted request; a stray row (the run's login,
    /// outside every run-scoped queue, not answered to it) may be another case's, so it sends
    /// the case to run again alone ([`Inner::strays_seen`]) instead of failing it here.
    fn count_beside(
        &self,
        inner: &mut Inner,
        asked: usize,
        scope: &str,
    ) -> Result<(), CaseFailure> {
        let run_prefix = format!("{}_p", self.db.prefix());
        let answered = inner.answered.clone();
        let (conn, tables) = self.client_and_tables(inner)?;
        let (own, strays) = self
            .db
            .pg
            .block_on(count_split_with(
                conn,
                &self.db,
                tables,
                scope,
                &run_prefix,
                self.login.run_scoped.as_deref(),
                &answered,
            ))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| CaseFailure::harness(format!("counting the case's job rows: {e}")))?;
        if strays > 0 {
            inner.strays_seen = true;
            return Ok(());
        }
        inner.doubt |= usize::try_from(own).ok() != Some(asked);
        judge::row_count(asked, own, "the producer")
    }

    /// Whether the target reads a job back whole (`job_stored`, revision 1.2): then the
    /// payload a producer stores is judged too.
    pub(super) fn payload_read(&self) -> bool {
        matches!(self.target, Target::Contract) && self.db.has("job_stored")
    }

    /// The connection, and the schema's tables for the row count and sweep, read once per
    /// connection (per case on released Awa; kept in `inner.tables`).
    pub(super) fn client_and_tables<'a>(
        &self,
        inner: &'a mut Inner,
    ) -> Result<(Cached<'a>, &'a Tables), CaseFailure> {
        // A reconnect forgets the tables: read them again on the new connection.
        self.client(inner)?;
        if inner.tables.is_none() {
            let conn = self.conn(inner)?;
            let tables = self
                .db
                .pg
                .block_on(Tables::read(conn, &self.db))
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| CaseFailure::harness(format!("reading the schema's tables: {e}")))?;
            inner.tables = Some(tables);
        }
        match (&inner.client, &inner.tables) {
            (Some(client), Some(tables)) => Ok((Cached::new(client, &inner.statements), tables)),
            _ => Err(CaseFailure::harness("no connection")),
        }
    }

    /// What the server makes of `call`'s payload, and its clock now.
    pub(super) fn asked(
        &self,
        inner: &mut Inner,
        call: &InsertJob,
    ) -> Result<(call::Asked, String), CaseFailure> {
        let st = self.prepared(inner, call::ASKED_SQL)?;
        let client = self.client(inner)?;
        let (mut asked, clock) = self
            .db
            .pg
            .block_on(call::asked_with(client, &st, std::slice::from_ref(call)))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err("reading what the server makes of the payload", &e))?;
        let one = asked
            .pop()
            .ok_or_else(|| CaseFailure::harness("payload_asked.sql returned no row"))?;
        Ok((one, clock))
    }

    /// The stored job, through `job_routing` (or queue storage on released Awa).
    pub(super) fn read(&self, inner: &mut Inner, job_id: i64) -> Result<Observed, CaseFailure> {
        self.read_back(inner, job_id, false).map(|(read, _)| read)
    }

    /// The stored job, through `job_routing` (or queue storage on released Awa); with
    /// `whole`, also the job whole through `job_stored` and the clock after reading it. On a
    /// contract database the reads go out pipelined (one round trip). The whole job's read
    /// may fail where the routing's did not (a made-up job id): its error is returned apart,
    /// for the caller to raise only after judging the routing.
    pub(super) fn read_back(
        &self,
        inner: &mut Inner,
        job_id: i64,
        whole: bool,
    ) -> Result<(Observed, Option<Whole>), CaseFailure> {
        if let Some(storage) = self.storage()? {
            let client = self.client(inner)?;
            let read = self
                .db
                .pg
                .block_on(call::released_job(client, storage, job_id))
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| self.db_err("reading the stored job from queue storage", &e))?;
            return Ok((read, None));
        }
        let routing = self.prepared(inner, &call::read_sql(&self.db))?;
        let stored = match whole {
            true => Some((
                self.prepared(inner, &call::stored_sql_in(self.db.schema.quoted()))?,
                self.prepared(inner, call::CLOCK_SQL)?,
            )),
            false => None,
        };
        let client = self.client(inner)?;
        let (read, whole) =
            self.db
                .pg
                .block_on(futures_util::future::join(
                    async {
                        call::read(client, &routing, job_id).await.map_err(|e| {
                            self.db_err("reading the stored job through job_routing", &e)
                        })
                    },
                    async {
                        let (stored, clock) = stored.as_ref()?;
                        let (whole, to) = futures_util::future::join(
                            call::stored(client, stored, job_id),
                            call::clock_with(client, clock),
                        )
                        .await;
                        Some(whole.and_then(|w| to.map(|t| (w, t))).map_err(|e| {
                            self.db_err("reading the stored job through job_stored", &e)
                        }))
                    },
                ))
                .map_err(|e| CaseFailure::harness(e.to_string()))?;
        Ok((read?, whole))
    }

    /// The message of a case whose unique key a job outside the case holds: that job (id,
    /// queue, key, enqueuing login) and the statement that removes it (ADR 0049). The run
    /// never removes it itself: it is not the run's.
    pub(super) fn blocked(&self, inner: &mut Inner, key: Option<&[u8]>, refusal: &str) -> String {
        let key_hex = key.map_or_else(|| "NULL".to_owned(), hex);
        let head = format!(
            "a job outside this case already holds the unique key {key_hex} the case needs \
             (insert_job: {refusal})"
        );
        let (Target::Contract, Some(key)) = (&self.target, key) else {
            return format!(
                "{head}; it is not this run's, so the run leaves it: remove the job holding \
                 that key, then rerun"
            );
        };
        let s = self.db.schema.quoted();
        let found = self.client(inner).and_then(|client| {
            self.db
                .pg
                .block_on(client.query_opt(
                    &include_str!("../../../sql/blocking_job.sql").in_schema(s),
                    &[&key],
                ))
                .map_err(|e| CaseFailure::harness(e.to_string()))?
                .map_err(|e| self.db_err("looking up the job that holds the key", &e))
        });
        match found {
            Ok(Some(row)) => {
                let id: i64 = row.get(0);
                let queue: Option<String> = row.get(1);
                let login: Option<String> = row.get(2);
                format!(
                    "{head}: job {id} in queue {}, enqueued by login {}. It is not this \
                     run's, so the run leaves it. If nothing else needs it, remove it and \
                     rerun:\n  WITH claim AS (DELETE FROM {s}.job_unique_claims WHERE job_id \
                     = {id}) DELETE FROM {s}.contract_jobs WHERE id = {id};",
                    queue
                        .as_deref()
                        .map_or_else(|| "(no job row, only its claim)".to_owned(), sql_literal),
                    login
                        .as_deref()
                        .map_or_else(|| "(unknown)".to_owned(), sql_literal),
                )
            }
            Ok(None) => format!("{head}; no claim holds it any more: rerun"),
            Err(e) => format!("{head}; {}", e.message),
        }
    }
}
