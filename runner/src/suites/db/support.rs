//! Shared machinery of the DB suites: cases → trials, rolled-back transactions, the insert
//! and read statements, routing comparison, SQLSTATE checks, and the run-scoped sweep.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use libtest_mimic::Trial;
use serde_json::{json, Value as Json};
use tokio_postgres::{Client, Row, Statement};

use super::{DbSetup, SUITE};
use crate::outcome::{CaseFailure, RunContext, Verdict};
use crate::pg::PgError;
use crate::schema_install::quote_ident;

/// The check of one DB case.
pub(super) type Check = Box<dyn FnOnce(Arc<DbSetup>) -> Result<Verdict, CaseFailure> + Send>;

/// One DB case before it becomes a trial.
pub(super) struct Case {
    /// Full trial name, `sql::<suite>::<case>`.
    pub(crate) name: String,
    /// Capabilities (`contract_capabilities()`) the case needs. A missing optional one makes
    /// the case not applicable; mandatory ones ([`super::levels::CORE`]) never do.
    pub(crate) requires: Vec<String>,
    /// The check.
    pub(crate) check: Check,
}

impl Case {
    /// A case named `sql::<suite>::<case>`.
    pub(crate) fn new(
        suite: &str,
        case: &str,
        check: impl FnOnce(Arc<DbSetup>) -> Result<Verdict, CaseFailure> + Send + 'static,
    ) -> Self {
        Self {
            name: format!("{SUITE}::{suite}::{case}"),
            requires: Vec::new(),
            check: Box::new(check),
        }
    }

    /// Require a capability.
    pub(crate) fn requires(mut self, capability: &str) -> Self {
        self.requires.push(capability.to_owned());
        self
    }
}

/// Turn a case into a trial: ignored without a database, not applicable when a required
/// optional capability is missing, otherwise run. A mandatory capability missing from the
/// list does not excuse a case: it runs, and `sql::catalog::core_capabilities` fails.
pub(super) fn to_trial(
    ctx: &Arc<RunContext>,
    db: Option<&Arc<DbSetup>>,
    no_db_reason: &str,
    case: Case,
) -> Trial {
    let Some(db) = db else {
        return ctx.ignored(SUITE, case.name, no_db_reason.to_owned());
    };
    let missing: Vec<&String> = case
        .requires
        .iter()
        .filter(|c| !super::levels::is_core(c) && !db.capabilities.contains(c))
        .collect();
    if !missing.is_empty() {
        let reason = format!(
            "{}.contract_capabilities() lacks {}",
            db.schema,
            missing
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ctx.not_applicable(SUITE, case.name, reason);
    }
    let db = Arc::clone(db);
    let check = case.check;
    ctx.trial_with(SUITE, case.name, move || check(db))
}

/// A random 12-hex-digit id (std's randomly keyed SipHash; no extra dependency).
#[must_use]
pub fn run_id() -> String {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    format!("{:012x}", h.finish() & 0xffff_ffff_ffff)
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// A name unique within the run: `awa_conformance_<run>_<n>`. Parallel cases never share a
/// queue or key, so their uncommitted rows never block each other.
pub(super) fn unique_name(db: &DbSetup) -> String {
    format!("{}_{}", db.prefix(), SEQ.fetch_add(1, Ordering::Relaxed))
}

/// A 32-byte key unique to this run and call (no collision with existing claims).
pub(super) fn unique_bytes(db: &DbSetup, label: &str) -> Vec<u8> {
    let text = format!(
        "{}:{label}:{}",
        db.prefix(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    );
    let mut key = awa_conformance_core::concurrency_digest(text.as_bytes()).to_vec();
    key.truncate(32);
    key
}

/// Lowercase hex.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn opt_hex(bytes: Option<&[u8]>) -> Json {
    bytes.map_or(Json::Null, |b| Json::String(hex(b)))
}

/// A database error where the harness, not the implementation, is at fault.
pub(super) fn harness(e: PgError) -> CaseFailure {
    CaseFailure::harness(e.to_string())
}

/// Classify a query error: no server error = connection problem (harness); otherwise a
/// finding about the implementation under test.
pub(super) fn query_fail(db: &DbSetup, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
    let text = db.pg.describe(e);
    if is_harness_error(e) {
        CaseFailure::harness(format!(
            "{what}: the database connection failed: {text}; check the server and rerun"
        ))
    } else {
        CaseFailure::new(format!("{what} failed: {text}"))
    }
}

/// Errors that say nothing about the implementation: no server error at all (connection
/// closed), or SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention,
/// e.g. `pg_terminate_backend`, statement timeout) and 58 (system error).
pub(super) fn is_harness_error(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(d) => matches!(d.code().code().get(..2), Some("08" | "53" | "57" | "58")),
    }
}

/// A failing step of the harness's own setup (not of the contract function).
pub(super) fn setup_fail(db: &DbSetup, what: &str, e: &tokio_postgres::Error) -> CaseFailure {
    CaseFailure::harness(format!("{what}: {}", db.pg.describe(e)))
}

/// Run `f` on a pooled connection inside a transaction that is always rolled back.
pub(super) fn rolled_back<T>(
    db: &Arc<DbSetup>,
    f: impl AsyncFnOnce(&Client) -> Result<T, CaseFailure>,
) -> Result<T, CaseFailure> {
    db.pg
        .block_on(async {
            let mut pooled = db.pg.pooled().await.map_err(harness)?;
            let client = pooled.get().map_err(harness)?;
            client
                .batch_execute("BEGIN")
                .await
                .map_err(|e| query_fail(db, "BEGIN", &e))?;
            let out = f(client).await;
            // A connection that cannot roll back is not returned to the pool.
            client
                .batch_execute("ROLLBACK")
                .await
                .map_err(|e| query_fail(db, "ROLLBACK", &e))?;
            pooled.mark_clean();
            out
        })
        .map_err(harness)?
}

/// Create `queue_meta` rows `<base>_w<width>` for each width (inside the case's transaction).
pub(super) async fn set_widths(
    client: &Client,
    db: &DbSetup,
    base: &str,
    widths: &[u8],
) -> Result<(), CaseFailure> {
    let widths: Vec<i16> = widths.iter().map(|w| i16::from(*w)).collect();
    client
        .execute(
            &include_str!("../../../sql/set_widths.sql").replace("@S@", &db.s()),
            &[&base, &widths],
        )
        .await
        .map_err(|e| setup_fail(db, "setting queue_meta.enqueue_shards", &e))?;
    Ok(())
}

/// The queue of `base` at `width` (see [`set_widths`]).
pub(super) fn width_queue(base: &str, width: u8) -> String {
    format!("{base}_w{width}")
}

/// A `run_at` far in the future: the job starts `scheduled`.
pub(super) const FUTURE: &str = "2999-01-01T00:00:00Z";
/// A `run_at` in the past: the job still starts `scheduled` (§10 rule 3, as released).
pub(super) const PAST: &str = "2000-01-01T00:00:00Z";

/// One `insert_job` call with every argument explicit.
#[derive(Debug, Clone)]
pub(super) struct Req {
    pub(crate) kind: String,
    pub(crate) queue: String,
    pub(crate) args: String,
    pub(crate) priority: i16,
    pub(crate) max_attempts: i16,
    pub(crate) run_at: Option<String>,
    pub(crate) metadata: String,
    pub(crate) tags: Vec<String>,
    pub(crate) unique_key: Option<Vec<u8>>,
    pub(crate) unique_states: Option<String>,
    pub(crate) ordering_key: Option<Vec<u8>>,
    pub(crate) concurrency_key: Option<Vec<u8>>,
    pub(crate) opts: String,
}

impl Req {
    /// A request with the contract defaults on `queue`.
    pub(crate) fn on(queue: &str) -> Self {
        Self {
            kind: "awa_conformance".to_owned(),
            queue: queue.to_owned(),
            args: "{}".to_owned(),
            priority: 2,
            max_attempts: 25,
            run_at: None,
            metadata: "{}".to_owned(),
            tags: Vec::new(),
            unique_key: None,
            unique_states: None,
            ordering_key: None,
            concurrency_key: None,
            opts: "{}".to_owned(),
        }
    }

    pub(crate) fn keys(mut self, ordering: Option<&[u8]>, concurrency: Option<&[u8]>) -> Self {
        self.ordering_key = ordering.map(<[u8]>::to_vec);
        self.concurrency_key = concurrency.map(<[u8]>::to_vec);
        self
    }

    pub(crate) fn opts(mut self, opts: &Json) -> Self {
        self.opts = opts.to_string();
        self
    }

    /// Schedule the job far in the future (state `scheduled`) or in the past (`available`).
    pub(crate) fn run_at(mut self, at: &str) -> Self {
        self.run_at = Some(at.to_owned());
        self
    }

    pub(crate) fn priority(mut self, priority: i16) -> Self {
        self.priority = priority;
        self
    }

    /// The initial state §10 rule 3 gives this request (contract v1.1, as released):
    /// `scheduled` whenever `run_at` is given, even in the past, else `available`.
    pub(crate) fn expected_state(&self) -> &'static str {
        if self.run_at.is_some() {
            "scheduled"
        } else {
            "available"
        }
    }

    pub(crate) fn unique(mut self, key: Option<&[u8]>, states: Option<&str>) -> Self {
        self.unique_key = key.map(<[u8]>::to_vec);
        self.unique_states = states.map(str::to_owned);
        self
    }
}

/// What `insert_job` returned.
#[derive(Debug, Clone)]
pub(super) struct Inserted {
    pub(crate) job_id: i64,
    pub(crate) queue: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) priority: Option<i16>,
    pub(crate) enqueue_shard: Option<i16>,
    pub(crate) route_source: Option<String>,
    pub(crate) concurrency_digest: Option<Vec<u8>>,
    pub(crate) unique_key: Option<Vec<u8>>,
}

/// What `job_routing` reads back.
#[derive(Debug, Clone)]
pub(super) struct Stored {
    pub(crate) job_id: Option<i64>,
    pub(crate) queue: Option<String>,
    pub(crate) enqueue_shard: Option<i16>,
    pub(crate) route_source: Option<String>,
    pub(crate) concurrency_digest: Option<Vec<u8>>,
    /// Contract v1.1: the §6 digest of the stored ordering key (job_routing never returns a
    /// raw key).
    pub(crate) ordering_key_digest: Option<Vec<u8>>,
    pub(crate) unique_key: Option<Vec<u8>>,
    pub(crate) unique_states: Option<String>,
    pub(crate) state: Option<String>,
    pub(crate) priority: Option<i16>,
}

/// The insert statement (README "prepared-statement form", text-cast parameters).
pub(super) fn insert_sql(db: &DbSetup) -> String {
    include_str!("../../../sql/insert_job_call.sql").replace("@S@", &db.s())
}

/// The read statement.
pub(super) fn read_sql(db: &DbSetup) -> String {
    include_str!("../../../sql/job_routing_call.sql").replace("@S@", &db.s())
}

/// Prepare the insert and read statements on this connection.
pub(super) async fn prepare(
    client: &Client,
    db: &DbSetup,
) -> Result<(Statement, Statement), CaseFailure> {
    let (ins, read) = futures_util::future::join(
        client.prepare(&insert_sql(db)),
        client.prepare(&read_sql(db)),
    )
    .await;
    Ok((
        ins.map_err(|e| query_fail(db, "preparing insert_job", &e))?,
        read.map_err(|e| query_fail(db, "preparing job_routing", &e))?,
    ))
}

/// Call `insert_job` once.
pub(super) async fn insert(
    client: &Client,
    st: &Statement,
    r: &Req,
) -> Result<Inserted, tokio_postgres::Error> {
    let row = client
        .query_one(
            st,
            &[
                &r.kind,
                &r.queue,
                &r.args,
                &r.priority,
                &r.max_attempts,
                &r.run_at,
                &r.metadata,
                &r.tags,
                &r.unique_key,
                &r.unique_states,
                &r.ordering_key,
                &r.concurrency_key,
                &r.opts,
            ],
        )
        .await?;
    inserted_from(&row)
}

fn inserted_from(row: &Row) -> Result<Inserted, tokio_postgres::Error> {
    Ok(Inserted {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        state: row.try_get(2)?,
        priority: row.try_get(3)?,
        enqueue_shard: row.try_get(4)?,
        route_source: row.try_get(5)?,
        concurrency_digest: row.try_get(6)?,
        unique_key: row.try_get(7)?,
    })
}

/// Read one job's stored routing.
pub(super) async fn read(
    client: &Client,
    st: &Statement,
    job_id: i64,
) -> Result<Stored, tokio_postgres::Error> {
    let row = client.query_one(st, &[&job_id]).await?;
    Ok(Stored {
        job_id: row.try_get(0)?,
        queue: row.try_get(1)?,
        enqueue_shard: row.try_get(2)?,
        route_source: row.try_get(3)?,
        concurrency_digest: row.try_get(4)?,
        ordering_key_digest: row.try_get(5)?,
        unique_key: row.try_get(6)?,
        unique_states: row.try_get(7)?,
        state: row.try_get(8)?,
        priority: row.try_get(9)?,
    })
}

/// Insert many requests pipelined on one connection, then read every stored routing, also
/// pipelined: two round-trip waves per case regardless of how many widths it covers.
pub(super) async fn insert_and_read_all(
    client: &Client,
    db: &DbSetup,
    reqs: &[Req],
) -> Result<Vec<(Inserted, Stored)>, CaseFailure> {
    let (ins, rd) = prepare(client, db).await?;
    let inserted =
        futures_util::future::join_all(reqs.iter().map(|r| insert(client, &ins, r))).await;
    let mut ok = Vec::with_capacity(reqs.len());
    for (r, res) in reqs.iter().zip(inserted) {
        match res {
            Ok(i) => ok.push(i),
            Err(e) => {
                return Err(query_fail(
                    db,
                    &format!(
                        "insert_job(queue {}, ordering_key {}, concurrency_key {}, opts {})",
                        r.queue,
                        opt_hex(r.ordering_key.as_deref()),
                        opt_hex(r.concurrency_key.as_deref()),
                        r.opts
                    ),
                    &e,
                ))
            }
        }
    }
    let stored =
        futures_util::future::join_all(ok.iter().map(|i| read(client, &rd, i.job_id))).await;
    let mut out = Vec::with_capacity(ok.len());
    for ((i, s), r) in ok.into_iter().zip(stored).zip(reqs) {
        let s = s.map_err(|e| query_fail(db, &format!("job_routing({})", i.job_id), &e))?;
        check_stored_request(r, &i, &s)?;
        out.push((i, s));
    }
    Ok(out)
}

/// The job's queue, priority, initial state and ordering key (as its digest, contract v1.1)
/// come back exactly as requested, both in the result of `insert_job` and as stored (read back
/// through `job_routing`).
fn check_stored_request(r: &Req, i: &Inserted, s: &Stored) -> Result<(), CaseFailure> {
    let requested_digest = r
        .ordering_key
        .as_deref()
        .map(|k| hex(&awa_conformance_core::concurrency_digest(k)));
    let want = json!({
        "queue": r.queue,
        "priority": r.priority,
        "state": r.expected_state(),
        "ordering_key_digest_hex": requested_digest,
    });
    let returned = json!({
        "queue": i.queue,
        "priority": i.priority,
        "state": i.state,
        "ordering_key_digest_hex": requested_digest,
    });
    let stored = json!({
        "queue": s.queue,
        "priority": s.priority,
        "state": s.state,
        "ordering_key_digest_hex": opt_hex(s.ordering_key_digest.as_deref()),
    });
    if returned == want && stored == want {
        return Ok(());
    }
    Err(CaseFailure::mismatch(
        format!(
            "job {}: queue, priority, state or ordering key not kept as requested",
            i.job_id
        ),
        want,
        json!({"returned": returned, "stored": stored}),
    ))
}

/// The routing a case expects at one width.
#[derive(Debug, Clone)]
pub(super) struct Expect {
    pub(crate) width: u8,
    pub(crate) route_source: &'static str,
    /// `None`: rotor, any shard in `[0, width)`.
    pub(crate) enqueue_shard: Option<u8>,
    pub(crate) concurrency_digest: Option<[u8; 32]>,
}

impl Expect {
    fn to_json(&self) -> Json {
        json!({
            "width": self.width,
            "route_source": self.route_source,
            "enqueue_shard": self.enqueue_shard.map_or_else(
                || Json::String(format!("any in [0, {})", self.width)),
                |s| json!(s)),
            "concurrency_digest_hex": opt_hex(self.concurrency_digest.as_ref().map(|d| &d[..])),
        })
    }

    /// The `opts` that states every expectation of this width.
    pub(crate) fn opts(&self) -> Json {
        let mut o = serde_json::Map::new();
        o.insert(
            "expected_concurrency_digest".to_owned(),
            opt_hex(self.concurrency_digest.as_ref().map(|d| &d[..])),
        );
        if let Some(s) = self.enqueue_shard {
            o.insert("expected_enqueue_shard".to_owned(), json!(s));
        }
        o.insert("expected_route_source".to_owned(), json!(self.route_source));
        Json::Object(o)
    }

    fn shard_ok(&self, got: Option<i16>) -> bool {
        // The rule lives in the core (Route::admits); a width outside 1..=64 admits nothing.
        awa_conformance_core::Width::new(i64::from(self.width)).is_ok_and(|w| {
            got.is_some_and(|g| {
                awa_conformance_core::shard_admitted(self.enqueue_shard, i64::from(g), w)
            })
        })
    }

    /// Compare one returned + stored routing with this expectation.
    pub(crate) fn check(
        &self,
        label: &str,
        ins: &Inserted,
        st: &Stored,
    ) -> Result<(), CaseFailure> {
        let want_digest = self.concurrency_digest.map(|d| d.to_vec());
        let returned_ok = ins.route_source.as_deref() == Some(self.route_source)
            && self.shard_ok(ins.enqueue_shard)
            && ins.concurrency_digest == want_digest;
        let stored_ok = st.job_id == Some(ins.job_id)
            && st.route_source.as_deref() == Some(self.route_source)
            && self.shard_ok(st.enqueue_shard)
            && st.enqueue_shard == ins.enqueue_shard
            && st.concurrency_digest == want_digest;
        if returned_ok && stored_ok {
            return Ok(());
        }
        let which = match (returned_ok, stored_ok) {
            (false, false) => "returned and stored routing",
            (false, true) => "returned routing",
            _ => "stored routing (job_routing)",
        };
        Err(CaseFailure::mismatch(
            format!(
                "{label}: {which} differs from the vector at width {}",
                self.width
            ),
            self.to_json(),
            json!({
                "returned": {
                    "route_source": ins.route_source,
                    "enqueue_shard": ins.enqueue_shard,
                    "concurrency_digest_hex": opt_hex(ins.concurrency_digest.as_deref()),
                },
                "stored": {
                    "job_id": st.job_id,
                    "route_source": st.route_source,
                    "enqueue_shard": st.enqueue_shard,
                    "concurrency_digest_hex": opt_hex(st.concurrency_digest.as_deref()),
                },
            }),
        ))
    }
}

/// The server error fields a rejection case compares.
#[derive(Debug, Clone)]
pub(super) struct Rejection {
    pub(crate) sqlstate: String,
    pub(crate) message: String,
    pub(crate) detail_code: Option<String>,
    /// The whole DETAIL, when it is JSON.
    pub(crate) detail: Option<Json>,
    pub(crate) constraint: Option<String>,
    pub(crate) hint: Option<String>,
}

/// What one DETAIL member of a contract error must be (schema/README.md error table).
#[derive(Debug, Clone)]
pub(super) enum Member {
    /// Exactly this JSON value.
    Eq(Json),
    /// An array holding exactly these strings, in any order.
    Set(&'static [&'static str]),
    /// A non-empty string (free text such as `expected_type`).
    Text,
}

impl Member {
    fn holds(&self, got: Option<&Json>) -> bool {
        match (self, got) {
            (Self::Eq(want), Some(g)) => want == g,
            (Self::Set(want), Some(Json::Array(g))) => {
                let mut got: Vec<&str> = g.iter().filter_map(Json::as_str).collect();
                let mut want = want.to_vec();
                got.sort_unstable();
                want.sort_unstable();
                got.len() == g.len() && got == want
            }
            (Self::Text, Some(Json::String(s))) => !s.trim().is_empty(),
            _ => false,
        }
    }

    fn describe(&self) -> Json {
        match self {
            Self::Eq(v) => v.clone(),
            Self::Set(v) => json!({"any order": v}),
            Self::Text => json!("(a non-empty string)"),
        }
    }
}

/// Turn an insert outcome into the rejection it raised (or a failure saying it succeeded).
pub(super) fn rejection<T: std::fmt::Debug>(
    db: &DbSetup,
    what: &str,
    res: Result<T, tokio_postgres::Error>,
) -> Result<Rejection, CaseFailure> {
    match res {
        Ok(v) => Err(CaseFailure::mismatch(
            format!("{what}: the call succeeded but must be rejected"),
            json!({"outcome": "rejected"}),
            json!({"outcome": "accepted", "result": format!("{v:?}")}),
        )),
        Err(e) => match e.as_db_error() {
            Some(d) if !is_harness_error(&e) => {
                let detail = d
                    .detail()
                    .and_then(|t| serde_json::from_str::<Json>(t).ok());
                let detail_code = detail
                    .as_ref()
                    .and_then(|j| j.get("code").and_then(Json::as_str).map(str::to_owned));
                Ok(Rejection {
                    sqlstate: d.code().code().to_owned(),
                    message: d.message().to_owned(),
                    detail_code,
                    detail,
                    constraint: d.constraint().map(str::to_owned),
                    hint: d.hint().map(str::to_owned),
                })
            }
            _ => Err(query_fail(db, what, &e)),
        },
    }
}

impl Rejection {
    /// Check the DETAIL members besides `code` that the error table lists for this error.
    pub(crate) fn expect_detail(
        &self,
        what: &str,
        members: &[(&'static str, Member)],
    ) -> Result<(), CaseFailure> {
        let bad: Vec<&str> = members
            .iter()
            .filter(|(k, m)| !m.holds(self.detail.as_ref().and_then(|d| d.get(*k))))
            .map(|(k, _)| *k)
            .collect();
        if bad.is_empty() {
            return Ok(());
        }
        let want: serde_json::Map<String, Json> = members
            .iter()
            .map(|(k, m)| ((*k).to_owned(), m.describe()))
            .collect();
        Err(CaseFailure::mismatch(
            format!(
                "{what}: DETAIL member(s) {} missing or wrong (the error table lists them)",
                bad.join(", ")
            ),
            Json::Object(want),
            json!({"detail": self.detail, "sqlstate": self.sqlstate}),
        ))
    }

    /// Check SQLSTATE (+ DETAIL `code` for contract errors, + message for released ones).
    pub(crate) fn expect(
        &self,
        what: &str,
        sqlstate: &str,
        code: Option<&str>,
        message: Option<&str>,
    ) -> Result<(), CaseFailure> {
        let contract = sqlstate.starts_with("ZA");
        let mut ok = self.sqlstate == sqlstate;
        if let Some(c) = code {
            ok &= self.detail_code.as_deref() == Some(c);
        }
        if let Some(m) = message {
            ok &= self.message == m;
        }
        if contract {
            ok &= self.message.starts_with("awa.insert_job: ");
            ok &= self.hint.as_deref().is_some_and(|h| !h.trim().is_empty());
        }
        if ok {
            return Ok(());
        }
        let mut want = serde_json::Map::new();
        want.insert("sqlstate".to_owned(), json!(sqlstate));
        if let Some(c) = code {
            want.insert("detail.code".to_owned(), json!(c));
        }
        if let Some(m) = message {
            want.insert("message".to_owned(), json!(m));
        }
        if contract {
            want.insert(
                "message".to_owned(),
                json!(message.unwrap_or("awa.insert_job: …")),
            );
            want.insert("hint".to_owned(), json!("(non-empty)"));
        }
        let want = Json::Object(want);
        Err(CaseFailure::mismatch(
            format!("{what}: wrong rejection"),
            want,
            json!({
                "sqlstate": self.sqlstate,
                "detail.code": self.detail_code,
                "message": self.message,
                "hint": self.hint,
                "constraint": self.constraint,
            }),
        ))
    }
}

/// Remove committed rows of queues named `scope…` (and claims of their jobs plus
/// `extra_job_ids`) from every table of the schema; with `role`, also drop that login role
/// if it exists and has no session.
pub(super) async fn sweep(
    db: &DbSetup,
    scope: &str,
    extra_job_ids: &[i64],
    role: Option<&str>,
) -> Result<(), PgError> {
    let client = db.pg.connect().await?;
    sweep_on(&client, db, scope, extra_job_ids, role).await
}

/// [`sweep`] on a given connection.
pub(super) async fn sweep_on(
    client: &Client,
    db: &DbSetup,
    scope: &str,
    extra_job_ids: &[i64],
    role: Option<&str>,
) -> Result<(), PgError> {
    let err = |e: tokio_postgres::Error| PgError::Db(db.pg.describe(&e));
    let tables = sweep_tables(client, db).await?;
    let s = db.s();
    let prefix = scope.to_owned();
    let mut ids: Vec<i64> = extra_job_ids.to_vec();
    for t in tables.iter().filter(|t| t.queue && (t.job_id || t.id)) {
        let col = if t.job_id { "job_id" } else { "id" };
        let rows = client
            .query(
                &include_str!("../../../sql/sweep_job_ids.sql")
                    .replace("@S@", &s)
                    .replace("@T@", &quote_ident(&t.name))
                    .replace("@ID@", col),
                &[&prefix],
            )
            .await
            .map_err(err)?;
        ids.extend(rows.iter().map(|r| r.get::<_, i64>(0)));
    }
    // Claim-like tables (job_id, no queue) first, in case they reference the job rows.
    for t in tables.iter().filter(|t| !t.queue && t.job_id) {
        if !ids.is_empty() {
            client
                .execute(
                    &include_str!("../../../sql/sweep_claims.sql")
                        .replace("@S@", &s)
                        .replace("@T@", &quote_ident(&t.name)),
                    &[&ids],
                )
                .await
                .map_err(err)?;
        }
    }
    for t in tables.iter().filter(|t| t.queue) {
        client
            .execute(
                &include_str!("../../../sql/sweep_queue_rows.sql")
                    .replace("@S@", &s)
                    .replace("@T@", &quote_ident(&t.name)),
                &[&prefix],
            )
            .await
            .map_err(err)?;
    }
    let Some(role) = role else {
        return Ok(());
    };
    let droppable = client
        .query_opt(include_str!("../../../sql/role_droppable.sql"), &[&role])
        .await
        .map_err(err)?;
    if droppable.is_some() {
        client
            .batch_execute(&format!("DROP ROLE IF EXISTS {}", quote_ident(role)))
            .await
            .map_err(err)?;
    }
    Ok(())
}

/// The number of rows of the schema's tables (those with a queue column) whose queue starts
/// with `prefix`.
pub(super) async fn count_scope_rows(
    client: &Client,
    db: &DbSetup,
    prefix: &str,
) -> Result<i64, PgError> {
    let s = db.s();
    let mut n = 0i64;
    for t in sweep_tables(client, db).await?.iter().filter(|t| t.queue) {
        let row = client
            .query_one(
                &include_str!("../../../sql/scope_row_count.sql")
                    .replace("@S@", &s)
                    .replace("@T@", &quote_ident(&t.name)),
                &[&prefix],
            )
            .await
            .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
        n += row
            .try_get::<_, i64>(0)
            .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
    }
    Ok(n)
}

/// A base table of the schema and the columns a run-scoped row can be found by.
pub(super) struct SweepTable {
    pub(super) name: String,
    pub(super) queue: bool,
    pub(super) job_id: bool,
    pub(super) id: bool,
}

pub(super) async fn sweep_tables(
    client: &Client,
    db: &DbSetup,
) -> Result<Vec<SweepTable>, PgError> {
    let rows = client
        .query(include_str!("../../../sql/sweep_tables.sql"), &[&db.schema])
        .await
        .map_err(|e| PgError::Db(db.pg.describe(&e)))?;
    Ok(rows
        .iter()
        .map(|r| SweepTable {
            name: r.get(0),
            queue: r.get(1),
            job_id: r.get(2),
            id: r.get(3),
        })
        .collect())
}
