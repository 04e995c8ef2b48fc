//! A producer for the engine's own tests: speaks the producer protocol on stdin/stdout and
//! enqueues through `insert_job` with tokio-postgres, bound as the contract's recipe says.
//!
//! It computes canonical JSON and unique keys with the reference core, so it only tests the
//! engine (the example producers in examples/producers/ are written from the contract alone).
//! `AWA_TEST_PRODUCER_FAKE=NAME` (or `NAME=PARAM`) makes it wrong in one named way, so the
//! tests can show that the engine catches each mistake: the fakes, what each does and what the
//! engine must say of it are one table, `fakes.json` beside this file. A name the table does
//! not hold is refused (exit 2), so a misspelt fake never runs as a correct producer.
//! `AWA_TEST_PRODUCER_PROTOCOL=2` makes it a protocol 2 producer (default 3): it then fails
//! any request carrying a member protocol 3 added, as such a program would.
//! `AWA_TEST_PRODUCER_TRACE=1` adds the optional trace to each answer;
//! `AWA_TEST_PRODUCER_IN_FLIGHT=N` declares `max_in_flight` N and answers that many requests
//! at once, each on a connection of its own (with `AWA_TEST_PRODUCER_PEAK=PATH` it writes there,
//! on exit, the most requests it held at once);
//! `AWA_TEST_PRODUCER_PIDFILE=PATH` writes its process id there;
//! `AWA_TEST_PRODUCER_DELAY_MS=N` delays every answer by N ms.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::print_stdout,
    clippy::print_stderr,
    missing_docs
)]

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_postgres::Statement;

use awa_conformance_core::{self as core, Value};
use serde_json::{json, Value as Json};

fn from_typed(j: &Json) -> Value {
    let ty = j["type"].as_str().unwrap_or("");
    let v = &j["value"];
    match ty {
        "null" => Value::Null,
        "bool" => Value::Bool(v.as_bool().unwrap()),
        "int" => {
            let s = v.as_str().unwrap();
            s.parse::<i64>()
                .map(Value::Int)
                .unwrap_or_else(|_| Value::UInt(s.parse().unwrap()))
        }
        "float" => Value::Float(f64::from_bits(
            u64::from_str_radix(j["bits"].as_str().unwrap(), 16).unwrap(),
        )),
        "string" => Value::String(v.as_str().unwrap().to_owned()),
        "array" => Value::Array(v.as_array().unwrap().iter().map(from_typed).collect()),
        "object" => Value::Object(
            v.as_array()
                .unwrap()
                .iter()
                .map(|m| (m[0].as_str().unwrap().to_owned(), from_typed(&m[1])))
                .collect(),
        ),
        "nested" => {
            let mut inner = from_typed(v);
            for _ in 0..j["depth"].as_u64().unwrap() {
                inner = match j.get("key").and_then(Json::as_str) {
                    Some(k) => Value::Object(vec![(k.to_owned(), inner)]),
                    None => Value::Array(vec![inner]),
                };
            }
            inner
        }
        other => panic!("unknown typed value {other}"),
    }
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Python's `json.dumps` default separators: `", "` and `": "` (outside strings).
fn spaced(canonical: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut in_str = false;
    let mut esc = false;
    for &b in canonical {
        out.push(b);
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else if b == b'"' {
            in_str = true;
        } else if b == b',' || b == b':' {
            out.push(b' ');
        }
    }
    out
}

const INSERT: &str = "SELECT job_id FROM @S@.insert_job($1::text, $2::text, $3::text::jsonb, \
    $4::smallint, $5::smallint, $6::text::timestamptz, $7::text::jsonb, $8::text[], $9::bytea, \
    @STATES@, $11::bytea, $12::bytea, $13::text::jsonb)";

/// Commit a plain job of `job`'s kind into `queue` (`stray`: outside every run's queues)
/// and return its id: the mistake of a producer that writes where it was not asked to.
async fn stray_job(
    client: &tokio_postgres::Client,
    insert: &tokio_postgres::Statement,
    job: &Json,
    queue: &str,
) -> i64 {
    let kind = job["kind"].as_str().unwrap().to_owned();
    client
        .query_one(
            insert,
            &[
                &kind,
                &queue,
                &"{}",
                &None::<i16>,
                &None::<i16>,
                &None::<String>,
                &None::<String>,
                &Vec::<String>::new(),
                &None::<Vec<u8>>,
                &None::<String>,
                &None::<Vec<u8>>,
                &None::<Vec<u8>>,
                &"{}",
            ],
        )
        .await
        .unwrap()
        .get(0)
}

/// What every request shares: the mistake to make, the options, and the counters.
struct Shared {
    mutant: String,
    trace_on: bool,
    protocol: u64,
    crash_after: Option<u64>,
    served: AtomicU64,
    last_id: Mutex<Option<i64>>,
    /// Requests being answered now, and the most at once.
    held: AtomicU64,
    peak: AtomicU64,
    /// The queues of the requests taken and not answered yet, by seq (several in flight): a
    /// worker takes this lock to answer, so a job written under it lands before that answer.
    unanswered: tokio::sync::Mutex<std::collections::BTreeMap<u64, String>>,
}

/// A connection of its own and the prepared `insert_job` call.
async fn connect(dsn: &str, schema: &str, mutant: &str) -> (tokio_postgres::Client, Statement) {
    let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    let states = if mutant == "pad_states" {
        // The mistake of the issue: a fixed-width bit(8) pads a short value.
        "$10::text::varbit::bit(8)::varbit"
    } else {
        "$10::text::varbit"
    };
    let sql = INSERT
        .replace("@S@", &format!("\"{}\"", schema.replace('"', "\"\"")))
        .replace("@STATES@", states);
    let insert = client.prepare(&sql).await.expect("prepare");
    (client, insert)
}

/// The answer line to one request.
async fn answer(
    sh: &Shared,
    client: &tokio_postgres::Client,
    insert: &Statement,
    req: &Json,
) -> String {
    let mutant = sh.mutant.as_str();
    let (protocol, trace_on) = (sh.protocol, sh.trace_on);
    let on = |what: &str, case: &str| mutant.strip_prefix(what).is_some_and(|s| case.contains(s));
    let served = sh.served.fetch_add(1, Ordering::SeqCst) + 1;
    let seq = req["seq"].as_u64().unwrap();
    let case = req["case"].as_str().unwrap_or("");
    eprintln!("test-producer: request {seq} for {case}");
    if sh.crash_after == Some(served) {
        eprintln!("test-producer: crashing as asked");
        std::process::exit(3);
    }
    if on("hang_on=", case) {
        tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
    }
    if on("late_on=", case) {
        // Past the tests' --adapter-timeout of 1 s, then a correct answer.
        tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    }
    if let Some(ms) = std::env::var("AWA_TEST_PRODUCER_DELAY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        // Every answer takes this long: with several in flight, requests are in flight
        // whenever another one times out.
        tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    }
    if on("skip_on=", case) {
        return json!({"seq": seq, "skipped": true, "reason": "skipped by the mutant"}).to_string();
    }
    if on("garbage_on=", case) {
        return "this is not JSON".to_owned();
    }
    let job = &req["job"];
    if on("stray_on=", case) {
        let stray = stray_job(client, insert, job, "stray").await;
        eprintln!("test-producer: also committed job {stray} into queue stray");
    }
    if on("cross_on=", case) {
        // Into the queue of another request in flight, before that one is answered.
        for _ in 0..200 {
            let unanswered = sh.unanswered.lock().await;
            let other = unanswered
                .iter()
                .find(|(s, _)| **s != seq)
                .map(|(_, q)| q.clone());
            if let Some(queue) = other {
                let id = stray_job(client, insert, job, &queue).await;
                eprintln!("test-producer: also committed job {id} into queue {queue}");
                break;
            }
            drop(unanswered);
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
    if on("misroute_on=", case) {
        let id = stray_job(client, insert, job, "stray").await;
        return json!({"seq": seq, "job_id": id}).to_string();
    }
    let unknown = if protocol < 3 {
        ["metadata", "max_attempts"]
            .into_iter()
            .find(|m| job.get(m).is_some())
            .map(|m| format!("protocol {protocol} request carries {m}"))
            .or_else(|| {
                job.to_string()
                    .contains(r#""type":"nested""#)
                    .then(|| "unknown typed value nested".to_owned())
            })
    } else {
        None
    };
    if let Some(why) = unknown {
        return json!({"seq": seq, "error": why}).to_string();
    }
    let args = from_typed(&job["args"]);
    let canonical = core::canonical_json(&args).unwrap();
    let hex_of = |k: &str| job[k].as_str().map(unhex);
    let mut ordering_key = hex_of("ordering_key_hex");
    let mut concurrency_key = hex_of("concurrency_key_hex");
    if mutant == "no_ordering_key" {
        ordering_key = None;
    }
    if mutant == "drop_concurrency_key" {
        concurrency_key = None;
    }
    let mut kind = job["kind"].as_str().unwrap().to_owned();
    if mutant == "trim_kind" {
        kind = kind.trim().to_owned();
    }
    let mut queue = job["queue"].as_str().unwrap().to_owned();
    if let Some(p) = job["partition"].as_object() {
        let key = unhex(p["key_hex"].as_str().unwrap());
        let n = core::Partitions::new(p["partitions"].as_i64().unwrap()).unwrap();
        queue = core::physical_queue_name(&queue, core::partition_for_ordering_key(&key, n));
    }
    let mut trace = json!({"physical_queue": queue});
    let unique_key: Option<Vec<u8>> = job["unique"].as_object().map(|u| {
        let q = (u["by_queue"] == true).then_some(queue.as_str());
        let a = (u["by_args"] == true).then_some(&args);
        let mut period: Option<i64> = u["period_bucket"].as_str().map(|p| p.parse().unwrap());
        if mutant == "drop_period" {
            period = None;
        }
        let mut pre = core::unique_key_preimage(&kind, q, a, period).unwrap();
        if mutant == "json_separators" && a.is_some() {
            // Rebuild the pre-image with the wrong JSON.
            let mut p2 = kind.as_bytes().to_vec();
            if let Some(q) = q {
                p2.push(0);
                p2.extend_from_slice(q.as_bytes());
            }
            p2.push(0);
            p2.extend_from_slice(&spaced(&canonical));
            if let Some(p) = period {
                p2.push(0);
                p2.extend_from_slice(&p.to_le_bytes());
            }
            pre = p2;
            trace["canonical_args"] = json!(String::from_utf8_lossy(&spaced(&canonical)));
        } else if a.is_some() {
            trace["canonical_args"] = json!(String::from_utf8_lossy(&canonical));
        }
        let key = blake3::hash(&pre).as_bytes()[..16].to_vec();
        trace["unique_preimage_hex"] = json!(hex(&pre));
        trace["unique_key_hex"] = json!(hex(&key));
        key
    });
    let priority: Option<i16> = job["priority"].as_i64().map(|p| p as i16);
    let mut run_at: Option<String> = job["run_at"].as_str().map(str::to_owned);
    // Session-dependent mistakes: the instant written without its offset (read in the
    // session's time zone), or month first (read as the session's DateStyle orders it).
    let written_as = match mutant {
        "naive_run_at" => Some("YYYY-MM-DD HH24:MI:SS.US"),
        "mdy_run_at" => Some("MM/DD/YYYY HH24:MI:SS.US\"+00\""),
        _ => None,
    };
    if let (Some(format), Some(at)) = (written_as, &run_at) {
        let row = client
            .query_one(
                "SELECT to_char($1::text::timestamptz AT TIME ZONE 'UTC', $2::text)",
                &[at, &format],
            )
            .await
            .unwrap();
        run_at = Some(row.get(0));
    }
    let tags: Vec<String> = job["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    let states: Option<String> = job["unique_states"].as_str().map(str::to_owned);
    let mut metadata: Option<String> = job
        .get("metadata")
        .filter(|m| !m.is_null())
        .map(|m| String::from_utf8(core::canonical_json(&from_typed(m)).unwrap()).unwrap());
    if mutant == "drop_metadata" {
        metadata = None;
    }
    let max_attempts: Option<i16> = job
        .get("max_attempts")
        .and_then(Json::as_i64)
        .map(|m| i16::try_from(m).unwrap());
    let mut args_text = String::from_utf8(canonical.clone()).unwrap();
    if mutant == "drop_args" {
        // The key is computed from the args, but the job is stored without them.
        args_text = "{}".to_owned();
    }
    let res = client
        .query_one(
            insert,
            &[
                &kind,
                &queue,
                &args_text,
                &priority,
                &max_attempts,
                &run_at,
                &metadata,
                &tags,
                &unique_key,
                &states,
                &ordering_key,
                &concurrency_key,
                &job["opts"].to_string(),
            ],
        )
        .await;
    if (mutant == "twice" || on("twice_on=", case)) && unique_key.is_none() && res.is_ok() {
        // The same call again: a second job, never answered.
        let again = client
            .query_one(
                insert,
                &[
                    &kind,
                    &queue,
                    &args_text,
                    &priority,
                    &max_attempts,
                    &run_at,
                    &metadata,
                    &tags,
                    &unique_key,
                    &states,
                    &ordering_key,
                    &concurrency_key,
                    &job["opts"].to_string(),
                ],
            )
            .await;
        eprintln!(
            "test-producer: stored the job twice: {:?}",
            again.map(|r| r.get::<_, i64>(0))
        );
    }
    let answer = match res {
        Ok(_) if mutant == "made_up_id" => json!({"seq": seq, "job_id": 987_654_321_i64}),
        // The id of a job that is not this request's (one that existed before the run).
        Ok(_) if mutant.starts_with("foreign_id=") => {
            let id: i64 = mutant["foreign_id=".len()..].parse().unwrap();
            json!({"seq": seq, "job_id": id})
        }
        Ok(row) => {
            let id: i64 = row.get(0);
            *sh.last_id.lock().unwrap() = Some(id);
            if trace_on {
                json!({"seq": seq, "job_id": id, "trace": trace})
            } else {
                json!({"seq": seq, "job_id": id})
            }
        }
        Err(e) => match e.as_db_error() {
            // A caught duplicate answered with the job already there.
            Some(d) if mutant == "swallow_duplicate" && d.code().code() == "23505" => {
                json!({"seq": seq, "job_id": *sh.last_id.lock().unwrap()})
            }
            Some(d) => {
                let code = d
                    .detail()
                    .and_then(|t| serde_json::from_str::<Json>(t).ok())
                    .and_then(|j| j.get("code").cloned())
                    .unwrap_or(Json::Null);
                json!({"seq": seq, "refused": {"sqlstate": d.code().code(), "code": code, "message": d.message()}})
            }
            None => json!({"seq": seq, "error": e.to_string()}),
        },
    };
    answer.to_string()
}

/// The table of fakes (`fakes.json`): the one place a fake is named and described.
const FAKES: &str = include_str!("fakes.json");

/// `Ok` for no fake, or for one the table holds with the parameter its row `takes`.
fn check_fake(switch: &str) -> Result<(), String> {
    if switch.is_empty() {
        return Ok(());
    }
    let table: Json = serde_json::from_str(FAKES).map_err(|e| format!("fakes.json: {e}"))?;
    let (name, param) = match switch.split_once('=') {
        Some((n, p)) => (n, Some(p)),
        None => (switch, None),
    };
    let row = table["fakes"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .ok_or_else(|| {
            format!("no fake named {name:?}: the fakes are the rows of runner/tests/producers/fakes.json")
        })?;
    match (row["takes"].as_str(), param) {
        (None, None) => Ok(()),
        (Some("number"), Some(p)) if p.parse::<i64>().is_ok() => Ok(()),
        (Some("case"), Some(p)) if !p.is_empty() => Ok(()),
        (takes, _) => Err(format!(
            "fake {name:?} takes {}: write {}",
            takes.map_or("no parameter".to_owned(), |t| format!("a {t}")),
            takes.map_or(name.to_owned(), |t| format!("{name}=<{t}>"))
        )),
    }
}

#[tokio::main]
async fn main() {
    let mutant = std::env::var("AWA_TEST_PRODUCER_FAKE").unwrap_or_default();
    if let Err(why) = check_fake(&mutant) {
        eprintln!("test-producer: {why}");
        std::process::exit(2);
    }
    let dsn = std::env::var("AWA_CONFORMANCE_DSN").expect("AWA_CONFORMANCE_DSN");
    let schema = std::env::var("AWA_CONFORMANCE_SCHEMA").expect("AWA_CONFORMANCE_SCHEMA");
    let in_flight: usize = std::env::var("AWA_TEST_PRODUCER_IN_FLIGHT")
        .ok()
        .map_or(1, |n| n.parse().unwrap());
    let (client, insert) = connect(&dsn, &schema, &mutant).await;
    if let Ok(path) = std::env::var("AWA_TEST_PRODUCER_PIDFILE") {
        std::fs::write(path, std::process::id().to_string()).unwrap();
    }
    let protocol: u64 = std::env::var("AWA_TEST_PRODUCER_PROTOCOL")
        .ok()
        .map_or(3, |p| p.parse().unwrap());
    let protocol = if mutant == "nested_unknown" {
        2
    } else {
        protocol
    };
    let mut hello = json!({"type":"hello","protocol":protocol,
           "implementation":{"name":"test-producer","version":mutant},
           "capabilities":["enqueue","errors"]});
    if in_flight > 1 {
        hello["max_in_flight"] = json!(in_flight);
    }
    let sh = Arc::new(Shared {
        crash_after: mutant
            .strip_prefix("crash_after=")
            .map(|n| n.parse().unwrap()),
        trace_on: std::env::var("AWA_TEST_PRODUCER_TRACE").as_deref() == Ok("1"),
        protocol,
        mutant,
        served: AtomicU64::new(0),
        last_id: Mutex::new(None),
        held: AtomicU64::new(0),
        peak: AtomicU64::new(0),
        unanswered: tokio::sync::Mutex::new(std::collections::BTreeMap::new()),
    });
    write_line(&hello.to_string());
    if in_flight <= 1 {
        for line in std::io::stdin().lock().lines() {
            let req: Json = serde_json::from_str(&line.unwrap()).unwrap();
            if req["type"] == "stop" {
                break;
            }
            write_line(&answer(&sh, &client, &insert, &req).await);
        }
        return;
    }
    // Several in flight: a worker per request it may hold, each with its own connection,
    // answering in whatever order its calls finish.
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Json>();
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let mut workers = Vec::new();
    let mut first = Some((client, insert));
    for _ in 0..in_flight {
        let (sh, rx) = (Arc::clone(&sh), Arc::clone(&rx));
        let conn = first.take();
        let (dsn, schema) = (dsn.clone(), schema.clone());
        workers.push(tokio::spawn(async move {
            let (client, insert) = match conn {
                Some(c) => c,
                None => connect(&dsn, &schema, &sh.mutant).await,
            };
            loop {
                let req = rx.lock().await.recv().await;
                let Some(req) = req else { break };
                let now = sh.held.fetch_add(1, Ordering::SeqCst) + 1;
                sh.peak.fetch_max(now, Ordering::SeqCst);
                let seq = req["seq"].as_u64().unwrap_or_default();
                let queue = req["job"]["queue"].as_str().unwrap_or_default().to_owned();
                sh.unanswered.lock().await.insert(seq, queue);
                let line = answer(&sh, &client, &insert, &req).await;
                sh.held.fetch_sub(1, Ordering::SeqCst);
                let mut unanswered = sh.unanswered.lock().await;
                unanswered.remove(&seq);
                write_line(&line);
                drop(unanswered);
            }
        }));
    }
    tokio::task::spawn_blocking(move || {
        for line in std::io::stdin().lock().lines() {
            let req: Json = serde_json::from_str(&line.unwrap()).unwrap();
            if req["type"] == "stop" || tx.send(req).is_err() {
                break;
            }
        }
    })
    .await
    .unwrap();
    for w in workers {
        w.await.unwrap();
    }
    if let Ok(path) = std::env::var("AWA_TEST_PRODUCER_PEAK") {
        std::fs::write(path, sh.peak.load(Ordering::SeqCst).to_string()).unwrap();
    }
}

/// One whole line on stdout (the workers share it).
fn write_line(line: &str) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").unwrap();
    out.flush().unwrap();
}
