// Example Awa producer in Node.js (node-postgres) speaking the runner's producer protocol (docs/adapter-protocol.md).
//
// Reads one enqueue request per line on stdin, enqueues it through `<schema>.insert_job` and
// answers on stdout. The hello declares `max_in_flight`: up to that many requests are enqueued at
// once, each on a pooled connection of its own, and each is answered with its seq once it has
// committed, in whatever order they finish. Everything contract-specific (canonical JSON, BLAKE3
// unique_key, partition, routing expectations) is computed here from docs/contract.md; the kit is
// never called.
// Env: AWA_CONFORMANCE_DSN (postgres:// URL).

import readline from 'node:readline';
import pg from 'pg';
import { Refusal, canonicalJson, fromTyped, uniqueKey } from './canonical.mjs';
import { MAX_KEY, expectations, physicalQueue } from './routing.mjs';

const NAME = 'awa-example-node';
const VERSION = '0.1.0';
// Protocol 3: a job also carries metadata and max_attempts, and run_at may have any offset.
const PROTOCOL = 3;
// Requests answered at once (hello.max_in_flight): the engine may send this many before it reads
// an answer, and the pool holds as many connections, so none of them waits for a connection.
const IN_FLIGHT = 8;

function send(line) {
  process.stdout.write(line + '\n');
}

function quoteIdent(name) {
  return '"' + name.replaceAll('"', '""') + '"';
}

// Explicit types on every parameter: insert_job has one signature and no overloads. Keys are
// bytea parameters (Buffers), unique_states is text cast to varbit (never bit(8): that cast pads
// '1111' to '11110000' before the function can refuse it), jsonb goes as JSON text, and run_at
// goes as the request's RFC 3339 text: PostgreSQL keeps its microseconds and offset, which a
// JavaScript Date (milliseconds) would not. A null parameter means the function's default.
function insertSql(schema) {
  return `SELECT job_id FROM ${quoteIdent(schema)}.insert_job($1::text, $2::text, $3::jsonb, $4::smallint,
    $5::smallint, $6::timestamptz, $7::jsonb, $8::text[], $9::bytea, $10::varbit, $11::bytea,
    $12::bytea, $13::jsonb)`;
}

function key(hex) {
  if (hex === null) return null;
  // Keys are bytes end to end: never a string (its encoding would change the bytes).
  return Buffer.from(hex, 'hex');
}

async function enqueue(client, req) {
  const job = req.job;
  const args = canonicalJson(fromTyped(job.args));
  // Metadata is typed like args and written the same way (canonical JSON text); null (or a
  // protocol 2 request, which has no member) leaves the default {}.
  const metadata = job.metadata == null ? null : canonicalJson(fromTyped(job.metadata));
  // A PartitionedQueue job carries its key as the ordering key of the physical queue (§5).
  const orderingKey = key(job.ordering_key_hex ?? (job.partition ? job.partition.key_hex : null));
  const concurrencyKey = key(job.concurrency_key_hex);
  for (const [field, k] of [['ordering_key', orderingKey], ['concurrency_key', concurrencyKey]]) {
    if (k !== null && k.length > MAX_KEY) throw new Refusal('key_too_long', `${field} is ${k.length} bytes (max ${MAX_KEY})`);
  }
  const queue = job.partition
    ? physicalQueue(job.queue, Buffer.from(job.partition.key_hex, 'hex'), job.partition.partitions)
    : job.queue;

  let unique = null;
  if (job.unique) {
    const u = job.unique;
    unique = uniqueKey(job.kind, u.by_queue ? queue : null, u.by_args ? args : null,
      u.period_bucket === null ? null : BigInt(u.period_bucket));
  }

  // Expectations: PostgreSQL computes the routing; sending what this producer expects makes the
  // database refuse (ZA001) a job this producer would have routed differently.
  let opts = job.opts;
  if (!Object.keys(opts).some((k) => k.startsWith('expected_'))) {
    const w = await client.query(`SELECT ${quoteIdent(req.schema)}.queue_enqueue_shards($1::text) AS w`, [queue]);
    opts = { ...opts, ...expectations(Number(w.rows[0].w), orderingKey, concurrencyKey) };
  }

  // One statement in autocommit: committed before we answer. (Inside a larger transaction, wrap
  // it in a savepoint so that a 23505 does not abort the transaction.)
  const res = await client.query(insertSql(req.schema), [
    job.kind, queue, args, job.priority, job.max_attempts, job.run_at, metadata, job.tags,
    unique && unique.key, job.unique_states, orderingKey, concurrencyKey,
    JSON.stringify(opts),
  ]);
  const trace = { canonical_args: args, physical_queue: queue };
  if (unique) {
    trace.unique_key_hex = unique.key.toString('hex');
    trace.unique_preimage_hex = unique.preimage.toString('hex');
  }
  // job_id is a bigint: pg returns it as a decimal string, written into the line as it is.
  return `{"seq":${req.seq},"job_id":${res.rows[0].job_id},"trace":${JSON.stringify(trace)}}`;
}

function refusedFromDb(err) {
  // Branch on the SQLSTATE, never the message; contract errors carry a JSON DETAIL with `code`.
  let code = null;
  if (err.detail) {
    try {
      const d = JSON.parse(err.detail);
      if (d && typeof d.code === 'string') code = d.code;
    } catch {
      // released errors (23505, 23514, ...) have a plain-text DETAIL or none
    }
  }
  return { sqlstate: err.code, code, message: err.message };
}

// Answers one enqueue request on a connection of the pool; never throws (every outcome is one
// answer line). The connection is held from the request's first query to its answer, so its
// queries run in order and no other request's query waits behind them.
async function answer(pool, req) {
  let client;
  try {
    client = await pool.connect();
  } catch (err) {
    // No connection is a fault of this producer, not the database refusing the job.
    send(JSON.stringify({ seq: req.seq, error: `no connection: ${err && err.message ? err.message : err}` }));
    return;
  }
  try {
    send(await enqueue(client, req));
  } catch (err) {
    if (err instanceof Refusal) send(JSON.stringify({ seq: req.seq, refused: { sqlstate: null, code: err.code, message: err.message } }));
    else if (err instanceof pg.DatabaseError) send(JSON.stringify({ seq: req.seq, refused: refusedFromDb(err) }));
    else send(JSON.stringify({ seq: req.seq, error: String(err && err.stack ? err.stack : err) }));
  } finally {
    // Back to the pool for the next request (the pool closes a connection that broke).
    client.release();
  }
}

async function main() {
  const dsn = process.env.AWA_CONFORMANCE_DSN;
  if (!dsn) {
    process.stderr.write(`${NAME}: AWA_CONFORMANCE_DSN is not set (the runner sets it)\n`);
    process.exit(2);
  }
  // Connections are opened on demand, at most one per request in flight.
  const pool = new pg.Pool({ connectionString: dsn, application_name: NAME, max: IN_FLIGHT });
  // An idle connection that dies is dropped by the pool and reopened by a later request; without
  // a listener its error event would crash the producer.
  pool.on('error', (err) => process.stderr.write(`${NAME}: idle connection lost: ${err.message}\n`));
  // One connection before the hello: an unreachable database fails the start, not every request.
  (await pool.connect()).release();
  send(JSON.stringify({
    type: 'hello', protocol: PROTOCOL, implementation: { name: NAME, version: VERSION },
    capabilities: ['enqueue', 'errors'], max_in_flight: IN_FLIGHT,
  }));

  // The requests taken and not answered yet: each removes itself once its answer is written.
  const inFlight = new Set();
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    const req = JSON.parse(line);
    if (req.type === 'stop') break;
    if (req.type !== 'enqueue') {
      send(JSON.stringify({ seq: req.seq ?? null, error: `unknown request type ${JSON.stringify(req.type)}` }));
      continue;
    }
    // Not awaited: the next request is read while this one waits on the database. The engine
    // sends at most IN_FLIGHT before it reads an answer; were it to send more, they would wait
    // in the pool's queue for a connection.
    const done = answer(pool, req).finally(() => inFlight.delete(done));
    inFlight.add(done);
  }
  // stop or EOF: nothing more is read, but every request already taken is answered first.
  await Promise.all(inFlight);
  await pool.end();
}

main().catch((err) => {
  process.stderr.write(`${NAME}: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
