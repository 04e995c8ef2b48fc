//! The database target of `fuzz`: random vectors through a database's contract functions, in
//! transactions that are always rolled back.
//!
//! routing_precedence vectors go through `insert_job` twice (without `opts`, and with every
//! expectation of the vector stated in `opts`) on a queue of the vector's width, and both the
//! returned and the stored routing (`job_routing`) are judged. concurrency_digest,
//! concurrency_shard and ordering_shard vectors go through the optional SQL helpers at every
//! width 1..=64, when the schema has them. canonical_json values, when the schema has
//! `job_stored` (revision 1.2), are the args of a job with the payload of `sql::payload::*` and
//! one stored input class of docs/contract.md §16 in turn (`contract::space`),
//! read back whole and judged by the one payload rule (a value holding `\u0000`, which jsonb
//! refuses, is not sent: `sql::payload` checks that refusal). Rejected-input vectors are not sent (the SQL
//! rejection suite checks the database's errors). Nothing is ever committed: the queue widths
//! are set inside the transaction, so the database is left exactly as found even when the run
//! is killed (the server rolls back a transaction whose connection goes away).

use crate::pg::SqlText;
use std::sync::Arc;

use awa_conformance_vectors::{Case, Family};
use serde_json::{json, Value as Json};
use tokio_postgres::{Client, Statement};

use super::gen::Generated;
use super::{Checked, Finding, Stop};
use crate::contract::call::{self, InsertJob};
use crate::contract::{expect, space};
use crate::error::Error;
use crate::pg::quote_ident;
use crate::pg::{Dsn, Pg, PgError};
use awa_conformance_vectors::to_hex as hex;

/// The job kind of every fuzz insert (never committed).
const KIND: &str = "awa_conformance.fuzz";

/// A database under fuzz.
pub struct DbTarget {
    pg: Arc<Pg>,
    /// The quoted contract schema.
    quoted: String,
    /// Queue base name: `<base>_w<width>` has `enqueue_shards = width` inside each transaction.
    base: String,
    /// Whether concurrency_digest, concurrency_shard and ordering_shard exist.
    helpers: bool,
    /// Whether job_stored exists (revision 1.2): generated payloads are judged whole.
    payload: bool,
    /// The calls keep the server's defaults (`--plain-sessions`) instead of the callers'
    /// settings, which each batch's transaction otherwise sets (docs/contract.md §12.4).
    plain: bool,
}

impl std::fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbTarget")
            .field("schema", &self.quoted)
            .field("helpers", &self.helpers)
            .finish_non_exhaustive()
    }
}

/// What one vector came to.
enum Outcome {
    Passed,
    NotSent,
    Found(Box<Finding>),
}

/// Errors that say nothing about the implementation: no server error at all (connection
/// closed), or SQLSTATE classes 08, 53, 57 and 58 (connection, resources, operator
/// intervention, system).
fn is_harness(e: &tokio_postgres::Error) -> bool {
    match e.as_db_error() {
        None => true,
        Some(d) => matches!(d.code().code().get(..2), Some("08" | "53" | "57" | "58")),
    }
}

impl DbTarget {
    /// Connect to `dsn`, check that the server is a supported major, and that `schema` has
    /// `insert_job` (v1 signature) and `job_routing`.
    ///
    /// # Errors
    /// [`Error::Connect`] or a too old (or untested) server (exit 4), or [`Error::Schema`]
    /// (exit 5), naming the fix.
    pub fn open(dsn: Dsn, schema: &crate::pg::SchemaName, plain: bool) -> Result<Self, Error> {
        let schema = schema.as_str();
        let pg = Pg::new(dsn)?;
        let row = pg.block_on(async {
            let client = pg.connect().await?;
            client
                .query_one(include_str!("../../sql/fuzz_preflight.sql"), &[&schema])
                .await
                .map_err(|e| PgError::Db(pg.describe(&e)))
        })??;
        let (insert_job, job_routing, helpers, payload, version): (bool, bool, bool, bool, i32) =
            (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
        // As a run's preflight: on a server the kit does not support every answer could be
        // wrong, so it is refused first (exit 4), an untested newer major unless allowed.
        crate::contract::server::support(
            version,
            crate::contract::server::untested_server_allowed_by_env(),
        )
        .map_err(|e| {
            Error::from(crate::contract::target::PreflightError::Environment(
                crate::contract::environment::EnvironmentError::Server(e),
            ))
        })?;
        crate::contract::environment::require_utf8(&row.get::<_, String>(5), &pg.dsn().redacted())
            .map_err(|e| Error::from(crate::contract::target::PreflightError::Environment(e)))?;
        let quoted = quote_ident(schema);
        if !insert_job || !job_routing {
            return Err(Error::caused(
                crate::error::Kind::Schema,
                crate::contract::target::PreflightError::Schema(format!(
                    "{quoted} has no {} with the contract v1 signature; point --schema at the \
                     contract schema, or try the kit on a scratch database with `awa-conformance \
                     schema install`",
                    if insert_job {
                        "job_routing(bigint)"
                    } else {
                        "insert_job(..., opts jsonb)"
                    }
                )),
            ));
        }
        Ok(Self {
            pg,
            quoted,
            base: format!("awa_conformance_{}_fuzz", crate::contract::sweep::run_id()),
            helpers,
            payload,
            plain,
        })
    }

    /// A one-line description for the run's header.
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "database {} schema {} (insert_job and job_routing{}{}), called with {}",
            self.pg.dsn().redacted(),
            self.quoted,
            if self.helpers {
                "; helpers concurrency_digest, concurrency_shard, ordering_shard"
            } else {
                "; the optional routing helpers are absent, so their families are not fuzzed"
            },
            if self.payload {
                "; job_stored: canonical_json values as payloads"
            } else {
                "; no job_stored (revision 1.2), so payloads are not fuzzed"
            },
            crate::contract::target::caller_settings_named(self.plain)
        )
    }

    /// The families this target checks.
    #[must_use]
    pub fn families(&self) -> Vec<Family> {
        let mut f = vec![Family::RoutingPrecedence];
        if self.helpers {
            f.extend([
                Family::ConcurrencyDigest,
                Family::ConcurrencyShard,
                Family::OrderingShard,
            ]);
        }
        if self.payload {
            f.push(Family::CanonicalJson);
        }
        f
    }

    /// Check a batch in one rolled-back transaction (a new one after a finding that aborted
    /// it).
    ///
    /// # Errors
    /// [`Error::Harness`] when the connection fails or a statement of the harness's own fails.
    pub fn check(&self, batch: &[Generated], stop: &Stop) -> Result<Checked, Error> {
        self.pg
            .block_on(self.check_async(batch, stop))?
            .map_err(|detail| Error::Harness { detail })
    }

    async fn begin(&self, client: &Client) -> Result<(), String> {
        let widths: Vec<i16> = (1..=64).collect();
        let begin = if self.plain {
            "BEGIN".to_owned()
        } else {
            format!("BEGIN; {}", crate::contract::target::caller_settings_sql())
        };
        client
            .batch_execute(&begin)
            .await
            .map_err(|e| self.pg.describe(&e))?;
        client
            .execute(
                &include_str!("../../sql/set_widths.sql").in_schema(&self.quoted),
                &[&self.base, &widths],
            )
            .await
            .map_err(|e| {
                format!(
                    "setting queue_meta.enqueue_shards for the fuzz queues: {}",
                    self.pg.describe(&e)
                )
            })?;
        Ok(())
    }

    async fn check_async(&self, batch: &[Generated], stop: &Stop) -> Result<Checked, String> {
        let mut pooled = self.pg.pooled().await.map_err(|e| e.to_string())?;
        let client = pooled.get().map_err(|e| e.to_string())?;
        let statements = Statements::prepare(client, self).await?;
        self.begin(client).await?;
        let mut out = Checked::default();
        for g in batch {
            if stop.get().is_some() {
                break;
            }
            match self.check_one(client, &statements, g).await {
                Ok(Outcome::Passed) => out.hit(g.family),
                Ok(Outcome::NotSent) => out.not_sent += 1,
                Ok(Outcome::Found(f)) => {
                    out.hit(g.family);
                    out.findings.push(*f);
                }
                Err(e) if is_harness(&e) => {
                    return Err(format!(
                        "the database connection failed on seed case {} ({}): {}",
                        g.case,
                        g.family,
                        self.pg.describe(&e)
                    ))
                }
                Err(e) => {
                    // The implementation raised an error for a valid input: a finding. The
                    // transaction is aborted; start a new one for the rest of the batch.
                    out.hit(g.family);
                    let d = e.as_db_error();
                    out.findings.push(Finding::new(
                        g,
                        "the database raised an error for a valid input".to_owned(),
                        g.vector.case.expected_json().to_serde(),
                        json!({
                            "sqlstate": d.map(|d| d.code().code()),
                            "message": d.map_or_else(|| e.to_string(), |d| d.message().to_owned()),
                        }),
                    ));
                    client
                        .batch_execute("ROLLBACK")
                        .await
                        .map_err(|e| self.pg.describe(&e))?;
                    self.begin(client).await?;
                }
            }
        }
        client
            .batch_execute("ROLLBACK")
            .await
            .map_err(|e| self.pg.describe(&e))?;
        pooled.mark_clean();
        Ok(out)
    }

    async fn check_one(
        &self,
        client: &Client,
        st: &Statements,
        g: &Generated,
    ) -> Result<Outcome, tokio_postgres::Error> {
        let key = match &g.vector.case {
            Case::ConcurrencyDigest(c) => &c.key,
            Case::ConcurrencyShard(c) => &c.key,
            Case::OrderingShard(c) => &c.key,
            Case::RoutingPrecedence(_) => return self.check_route(client, st, g).await,
            Case::CanonicalJson(c) => {
                return self.check_payload(client, st, g, &c.canonical_text).await
            }
            _ => return Ok(Outcome::NotSent),
        };
        let Some(helpers) = &st.helpers else {
            return Ok(Outcome::NotSent);
        };
        let answer = match g.family {
            Family::ConcurrencyDigest => {
                let row = client.query_one(&helpers.digest, &[key]).await?;
                json!({"digest_hex": row.try_get::<_, Option<Vec<u8>>>(0)?.as_deref().map(hex)})
            }
            Family::ConcurrencyShard => {
                let row = client.query_one(&helpers.concurrency, &[key]).await?;
                json!({"shards": row.try_get::<_, Option<Vec<Option<i32>>>>(0)?})
            }
            _ => {
                let row = client.query_one(&helpers.ordering, &[key]).await?;
                json!({"shards": row.try_get::<_, Option<Vec<Option<i32>>>>(0)?})
            }
        };
        let who = match g.family {
            Family::ConcurrencyDigest => "concurrency_digest(key)",
            Family::ConcurrencyShard => "concurrency_shard(concurrency_digest(key), width)",
            _ => "ordering_shard(key, width)",
        };
        Ok(judge(g, who, &answer))
    }

    /// A generated canonical_json value as the args of a job carrying the payload of
    /// `sql::payload::*` and one input class of another member, read back whole through `job_stored` and judged against what the
    /// server's own types make of the request (the one payload rule).
    async fn check_payload(
        &self,
        client: &Client,
        st: &Statements,
        g: &Generated,
        args: &str,
    ) -> Result<Outcome, tokio_postgres::Error> {
        use crate::contract::expect::exercise::{
            KIND as PAYLOAD_KIND, MAX_ATTEMPTS, METADATA, PRIORITY, RUN_AT, TAGS,
        };
        let Some(stored_st) = &st.stored else {
            return Ok(Outcome::NotSent);
        };
        if args.contains("\\u0000") {
            return Ok(Outcome::NotSent);
        }
        let mut request = InsertJob::new(PAYLOAD_KIND, &format!("{}_w1", self.base))
            .payload(args, MAX_ATTEMPTS, METADATA, &TAGS)
            .priority(PRIORITY);
        if g.case % 2 == 0 {
            request = request.run_at(RUN_AT);
        }
        // One stored class of the request's input space (docs/contract.md §16) per case, in
        // turn, so the fuzzed args travel with every kind, queue, tag, run_at and metadata
        // edge the suites send one at a time.
        let class = space::stored_class(g.case);
        if let Some(class) = class {
            class.apply_call(&mut request);
        }
        let (mut asked, from) =
            call::asked_with(client, &st.asked, std::slice::from_ref(&request)).await?;
        let inserted = call::insert(client, &st.insert, &request).await?;
        let whole = call::stored(client, stored_st, inserted.job_id).await?;
        let to = call::clock_with(client, &st.clock).await?;
        let Some(asked) = asked.pop() else {
            return Ok(Outcome::NotSent);
        };
        let want = expect::Payload::asked(&request, asked, (&from, &to));
        Ok(
            match crate::contract::judge::judge_payload("insert_job", &want, &whole) {
                Ok(()) => Outcome::Passed,
                Err(f) => Outcome::Found(Box::new(Finding::new(
                    g,
                    match class {
                        Some(c) => format!("with input class {}: {}", c.id, f.message),
                        None => f.message,
                    },
                    f.expected.unwrap_or_else(|| want.to_json()),
                    f.actual.unwrap_or(Json::Null),
                ))),
            },
        )
    }

    async fn check_route(
        &self,
        client: &Client,
        st: &Statements,
        g: &Generated,
    ) -> Result<Outcome, tokio_postgres::Error> {
        // The one expectation: the vector's keys and route at its own width.
        let Some(at) = expect::routes(&g.vector.case, &[])
            .filter(|_| matches!(g.vector.case, Case::RoutingPrecedence(_)))
            .and_then(|r| r.into_iter().next())
        else {
            return Ok(Outcome::NotSent);
        };
        let queue = format!("{}_w{}", self.base, at.width);
        let request = InsertJob::new(KIND, &queue)
            .keys(at.ordering_key.as_deref(), at.concurrency_key.as_deref());
        // Every expectation of the vector stated in opts (docs/contract.md opts keys): a
        // database that rejects its own correct routing is as wrong as one that routes wrong.
        for (label, request) in [
            ("no opts", request.clone()),
            (
                "opts stating the vector's routing",
                request.opts(&expect::route_opts(&at.route)),
            ),
        ] {
            let inserted = call::insert(client, &st.insert, &request).await?;
            let read = call::read(client, &st.read, inserted.job_id).await?;
            let returned = routing(
                inserted.returned.route_source,
                inserted.returned.enqueue_shard,
                inserted.returned.concurrency_digest,
            );
            let stored = routing(
                read.route_source,
                read.enqueue_shard,
                read.concurrency_digest,
            );
            for (what, answer) in [("insert_job's result", &returned), ("job_routing", &stored)] {
                if let Outcome::Found(f) = judge(g, &format!("{what} ({label})"), answer) {
                    return Ok(Outcome::Found(f));
                }
            }
            if returned != stored {
                return Ok(Outcome::Found(Box::new(Finding::new(
                    g,
                    format!("job_routing differs from insert_job's result ({label})"),
                    returned,
                    stored,
                ))));
            }
        }
        Ok(Outcome::Passed)
    }
}

/// A routing answer in the vector's expected shape.
fn routing(source: Option<String>, shard: Option<i16>, digest: Option<Vec<u8>>) -> Json {
    json!({
        "route_source": source,
        "enqueue_shard": shard,
        "concurrency_digest_hex": digest.as_deref().map(hex),
    })
}

/// The runner's one comparison of an answer with a vector.
fn judge(g: &Generated, who: &str, answer: &Json) -> Outcome {
    let expected = g.vector.case.expected_json().to_serde();
    let input = g.vector.case.input_json().to_serde();
    match crate::contract::judge::answer(who, &expected, &input, answer) {
        Ok(()) => Outcome::Passed,
        Err(f) => Outcome::Found(Box::new(Finding::new(
            g,
            f.message,
            expected,
            answer.clone(),
        ))),
    }
}

/// The statements of one connection.
struct Statements {
    insert: Statement,
    read: Statement,
    helpers: Option<Helpers>,
    /// job_stored, when the schema has it.
    stored: Option<Statement>,
    /// What the server makes of a payload, and its clock.
    asked: Statement,
    clock: Statement,
}

/// The optional routing helpers' statements.
struct Helpers {
    digest: Statement,
    concurrency: Statement,
    ordering: Statement,
}

impl Statements {
    async fn prepare(client: &Client, t: &DbTarget) -> Result<Self, String> {
        let sql = |text: &str| text.in_schema(&t.quoted);
        let err = |what: &str, e: tokio_postgres::Error| {
            format!("preparing {what}: {}", t.pg.describe(&e))
        };
        let insert = client
            .prepare(&call::insert_sql_in(&t.quoted))
            .await
            .map_err(|e| err("insert_job", e))?;
        let read = client
            .prepare(&call::read_sql_in(&t.quoted))
            .await
            .map_err(|e| err("job_routing", e))?;
        let helpers = if t.helpers {
            Some(Helpers {
                digest: client
                    .prepare(&sql(include_str!("../../sql/fuzz_concurrency_digest.sql")))
                    .await
                    .map_err(|e| err("concurrency_digest", e))?,
                concurrency: client
                    .prepare(&sql(include_str!("../../sql/fuzz_concurrency_shards.sql")))
                    .await
                    .map_err(|e| err("concurrency_shard", e))?,
                ordering: client
                    .prepare(&sql(include_str!("../../sql/fuzz_ordering_shards.sql")))
                    .await
                    .map_err(|e| err("ordering_shard", e))?,
            })
        } else {
            None
        };
        let stored = if t.payload {
            Some(
                client
                    .prepare(&call::stored_sql_in(&t.quoted))
                    .await
                    .map_err(|e| err("job_stored", e))?,
            )
        } else {
            None
        };
        let asked = client
            .prepare(call::ASKED_SQL)
            .await
            .map_err(|e| err("payload_asked", e))?;
        let clock = client
            .prepare(call::CLOCK_SQL)
            .await
            .map_err(|e| err("clock_now", e))?;
        Ok(Self {
            insert,
            read,
            helpers,
            stored,
            asked,
            clock,
        })
    }
}
