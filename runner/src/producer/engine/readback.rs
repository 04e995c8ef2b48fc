//! The engine's read-back of what a case stored: the job through `job_routing` (or released
//! Awa's queue storage), the whole job through `job_stored` with what the server makes of the
//! payload asked (revision 1.2), and the job rows a case left (the row-count rule).
//!
//! A submodule of the engine so that it shares the session's private state (the runner's
//! connection, the target) without widening it.

use super::*;

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
        let jobs = JobScope {
            queues: &[],
            prefix: Some(scope),
            login: self.login.run_scoped.as_deref(),
        };
        let client = self.client(inner)?;
        let found = self
            .db
            .pg
            .block_on(count_jobs(client, &self.db, jobs))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| CaseFailure::harness(format!("counting the case's job rows: {e}")))?;
        judge::row_count(asked, found, "the producer")?;
        Ok(verdict)
    }

    /// Whether the target reads a job back whole (`job_stored`, revision 1.2): then the
    /// payload a producer stores is judged too.
    pub(super) fn payload_read(&self) -> bool {
        matches!(self.target, Target::Contract) && self.db.has("job_stored")
    }

    /// What the server makes of `call`'s payload, and its clock now.
    pub(super) fn asked(
        &self,
        inner: &mut Inner,
        call: &InsertJob,
    ) -> Result<(call::Asked, String), CaseFailure> {
        let client = self.client(inner)?;
        let (mut asked, clock) = self
            .db
            .pg
            .block_on(call::asked(client, std::slice::from_ref(call)))
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err("reading what the server makes of the payload", &e))?;
        let one = asked
            .pop()
            .ok_or_else(|| CaseFailure::harness("payload_asked.sql returned no row"))?;
        Ok((one, clock))
    }

    /// The job whole through `job_stored`, and the clock after reading it.
    pub(super) fn whole(
        &self,
        inner: &mut Inner,
        job_id: i64,
    ) -> Result<(Stored, String), CaseFailure> {
        let client = self.client(inner)?;
        let db = &self.db;
        self.db
            .pg
            .block_on(async {
                let st = client
                    .prepare(&call::stored_sql_in(db.schema.quoted()))
                    .await?;
                let whole = call::stored(client, &st, job_id).await?;
                Ok((whole, call::clock(client).await?))
            })
            .map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err("reading the stored job through job_stored", &e))
    }

    /// The stored job, through `job_routing` (or queue storage on released Awa).
    pub(super) fn read(&self, inner: &mut Inner, job_id: i64) -> Result<Observed, CaseFailure> {
        let storage = self.storage()?;
        let client = self.client(inner)?;
        let db = &self.db;
        let (what, read) = match storage {
            Some(storage) => (
                "reading the stored job from queue storage",
                self.db
                    .pg
                    .block_on(call::released_job(client, storage, job_id)),
            ),
            None => (
                "reading the stored job through job_routing",
                self.db.pg.block_on(async {
                    let st = client.prepare(&call::read_sql(db)).await?;
                    call::read(client, &st, job_id).await.map(|r| r.observed())
                }),
            ),
        };
        read.map_err(|e| CaseFailure::harness(e.to_string()))?
            .map_err(|e| self.db_err(what, &e))
    }
}
