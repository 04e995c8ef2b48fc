// Command awa-bulk-producer is an example Awa producer in Go (pgx v5) for the staged bulk path.
//
// It reads one request per line on stdin (docs/adapter-protocol.md): a `bulk` request is one
// batch, an `enqueue` request a batch of one row. Every row is COPYed into
// <schema>.bulk_staging with the routing this program computed (digest, shard, route source,
// docs/contract.md §4–§8, §14) and its own canonical JSON and BLAKE3 unique_key (§1, §2), then
// <schema>.publish_batch checks and publishes the batch in the same transaction. The kit is
// never called. It is an example, not a supported client.
//
// Env: AWA_CONFORMANCE_DSN (libpq key=value or URL DSN), AWA_EXAMPLE_MUTANT (a deliberately
// broken variant, see README.md).
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	name    = "awa-example-bulk"
	version = "0.1.0"
)

var mutant = os.Getenv("AWA_EXAMPLE_MUTANT")

type uniqueOpts struct {
	ByQueue      bool    `json:"by_queue"`
	ByArgs       bool    `json:"by_args"`
	PeriodBucket *string `json:"period_bucket"`
}

type partitionOpts struct {
	KeyHex     string `json:"key_hex"`
	Partitions int    `json:"partitions"`
}

type job struct {
	Kind              string         `json:"kind"`
	Queue             string         `json:"queue"`
	Args              typed          `json:"args"`
	Priority          *int16         `json:"priority"`
	RunAt             *string        `json:"run_at"`
	Tags              []string       `json:"tags"`
	OrderingKeyHex    *string        `json:"ordering_key_hex"`
	ConcurrencyKeyHex *string        `json:"concurrency_key_hex"`
	Unique            *uniqueOpts    `json:"unique"`
	UniqueStates      *string        `json:"unique_states"`
	Partition         *partitionOpts `json:"partition"`
	Opts              map[string]any `json:"opts"`
}

// request is an `enqueue` (Job) or a `bulk` (Jobs) request.
type request struct {
	Type   string `json:"type"`
	Seq    int64  `json:"seq"`
	Schema string `json:"schema"`
	Job    *job   `json:"job"`
	Jobs   []job  `json:"jobs"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	dsn := os.Getenv("AWA_CONFORMANCE_DSN")
	if dsn == "" {
		return errors.New("AWA_CONFORMANCE_DSN is not set (the runner sets it)")
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)

	out := bufio.NewWriter(os.Stdout)
	send := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		out.Write(append(b, '\n'))
		return out.Flush() // one request at a time: the runner waits for this line
	}
	impl := version
	if mutant != "" {
		impl += "+" + mutant
	}
	if err := send(map[string]any{"type": "hello", "protocol": 2,
		"implementation": map[string]string{"name": name, "version": impl},
		"capabilities":   []string{"enqueue", "bulk", "errors"}}); err != nil {
		return err
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 64*1024), 4<<20) // the protocol caps a line at 1 MiB
	for in.Scan() {
		line := strings.TrimSpace(in.Text())
		if line == "" {
			continue
		}
		var req request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			return fmt.Errorf("request is not JSON: %w", err)
		}
		var answer map[string]any
		switch {
		case req.Type == "stop":
			return nil
		case req.Type == "enqueue" && req.Job != nil:
			answer = publish(ctx, conn, &req, []job{*req.Job}, false)
		case req.Type == "bulk" && len(req.Jobs) > 0:
			answer = publish(ctx, conn, &req, req.Jobs, true)
		default:
			answer = map[string]any{"seq": req.Seq, "error": "unknown or empty request of type " + strconv.Quote(req.Type)}
		}
		if err := send(answer); err != nil {
			return err
		}
	}
	return in.Err()
}

// decodeKey turns a request's hex key into bytes: nil stays absent, "" is the empty key.
func decodeKey(h *string) ([]byte, error) {
	if h == nil {
		return nil, nil
	}
	b, err := hex.DecodeString(*h)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{} // pgx sends a nil slice as NULL: keep the empty key non-nil
	}
	return b, nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// stagingColumns are the columns a producer may write (never staged_by, filled by its default).
var stagingColumns = []string{"batch_id", "row_no", "kind", "queue", "args", "priority", "run_at",
	"tags", "unique_key", "unique_states", "ordering_key", "concurrency_key",
	"concurrency_digest", "enqueue_shard", "route_source"}

// rowRefusal is a client-side refusal of one row of the request.
type rowRefusal struct {
	row  int
	code string
	msg  string
}

// stageRow computes everything the staging row carries except the batch and the width-dependent
// routing: args, unique key, keys, physical queue. width looks a queue's width up (cached).
func stageRow(j *job, rowNo int, width func(string) (int, error)) ([]any, map[string]any, *rowRefusal, error) {
	if len(j.Opts) > 0 {
		// The staging table has no opts: a request with opts is not something this path can do.
		return nil, nil, nil, errSkip
	}
	argsValue, err := fromTyped(j.Args)
	var args []byte
	if err == nil {
		args, err = canonicalJSON(argsValue)
	}
	var r *refusal
	if errors.As(err, &r) {
		return nil, nil, &rowRefusal{rowNo, r.code, r.msg}, nil
	} else if err != nil {
		return nil, nil, nil, err
	}
	orderingHex := j.OrderingKeyHex
	if orderingHex == nil && j.Partition != nil {
		// A PartitionedQueue job carries its key as the ordering key of the physical queue (§5).
		orderingHex = &j.Partition.KeyHex
	}
	orderingKey, err := decodeKey(orderingHex)
	if err != nil {
		return nil, nil, nil, err
	}
	concurrencyKey, err := decodeKey(j.ConcurrencyKeyHex)
	if err != nil {
		return nil, nil, nil, err
	}
	if mutant == "no_concurrency_key" {
		concurrencyKey = nil // the mutant: the concurrency key is never staged
	}
	for _, k := range []struct {
		field string
		key   []byte
	}{{"ordering_key", orderingKey}, {"concurrency_key", concurrencyKey}} {
		if len(k.key) > maxKey {
			return nil, nil, &rowRefusal{rowNo, "key_too_long", fmt.Sprintf("%s is %d bytes (max %d)", k.field, len(k.key), maxKey)}, nil
		}
	}
	queue := j.Queue
	if j.Partition != nil {
		pk, err := hex.DecodeString(j.Partition.KeyHex)
		if err != nil {
			return nil, nil, nil, err
		}
		queue = physicalQueue(j.Queue, pk, j.Partition.Partitions)
	}
	trace := map[string]any{"canonical_args": string(args), "physical_queue": queue}
	var uniqueKeyBytes []byte
	if u := j.Unique; u != nil {
		var q *string
		if u.ByQueue {
			q = &queue
		}
		var a []byte
		if u.ByArgs {
			a = args
		}
		var bucket *int64
		if u.PeriodBucket != nil {
			b, err := strconv.ParseInt(*u.PeriodBucket, 10, 64)
			if err != nil {
				return nil, nil, nil, err
			}
			bucket = &b
		}
		pre, key := uniqueKey(j.Kind, q, a, bucket)
		uniqueKeyBytes = key
		if mutant == "no_unique_key" {
			uniqueKeyBytes = nil // the mutant: the key is computed but never staged
		}
		trace["unique_key_hex"] = hex.EncodeToString(key)
		trace["unique_preimage_hex"] = hex.EncodeToString(pre)
	}
	w, err := width(queue)
	if err != nil {
		return nil, nil, nil, err
	}
	rt := stagedRouting(w, orderingKey, concurrencyKey)
	// unique_states is staged as a varbit of exactly the bits given: a '1111' must reach
	// publish_batch as 4 bits (refused there, 22026), never padded to bit(8).
	var states any
	if j.UniqueStates != nil {
		b, err := varbit(*j.UniqueStates)
		if err != nil {
			return nil, nil, nil, err
		}
		states = b
	}
	tags := j.Tags
	if tags == nil {
		tags = []string{}
	}
	var runAt any
	if j.RunAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *j.RunAt)
		if err != nil {
			return nil, nil, nil, err
		}
		runAt = t
	}
	values := []any{nil, int32(rowNo), j.Kind, queue, string(args), j.Priority, runAt, tags,
		uniqueKeyBytes, states, orderingKey, concurrencyKey, rt.digest, rt.shard, rt.source}
	return values, trace, nil, nil
}

var errSkip = errors.New("skip")

// publish stages jobs as rows 1..n of a new batch and publishes them in one transaction.
// single marks an enqueue request: its batch errors are answered as insert_job's would be.
func publish(ctx context.Context, conn *pgx.Conn, req *request, jobs []job, bulk bool) map[string]any {
	failed := func(err error) map[string]any { return map[string]any{"seq": req.Seq, "error": err.Error()} }
	refused := func(sqlstate, code any, row *int, msg string) map[string]any {
		r := map[string]any{"sqlstate": sqlstate, "code": code, "message": msg}
		if bulk && row != nil {
			r["row"] = *row
		}
		return map[string]any{"seq": req.Seq, "refused": r}
	}
	schema := quoteIdent(req.Schema)
	widths := map[string]int{}
	width := func(queue string) (int, error) {
		if w, ok := widths[queue]; ok {
			return w, nil
		}
		var w int16
		err := conn.QueryRow(ctx, "SELECT "+schema+".queue_enqueue_shards($1::text)", queue).Scan(&w)
		widths[queue] = int(w)
		return int(w), err
	}
	batch, err := newBatch()
	if err != nil {
		return failed(err)
	}
	rows := make([][]any, 0, len(jobs))
	var traces []map[string]any
	for i := range jobs {
		rowNo := i + 1
		if mutant == "rows_from_zero" {
			rowNo = i // the mutant: 0-based row numbers, so every error names the row before
		}
		values, trace, ref, err := stageRow(&jobs[i], rowNo, width)
		if errors.Is(err, errSkip) {
			return map[string]any{"seq": req.Seq, "skipped": true, "reason": "the staged bulk path has no opts column"}
		}
		if err != nil {
			return dbError(err, refused, failed)
		}
		if ref != nil {
			return refused(nil, ref.code, &ref.row, ref.msg)
		}
		values[0] = batch
		rows = append(rows, values)
		traces = append(traces, trace)
	}

	if bulk && mutant == "per_row_commit" {
		return perRowCommit(ctx, conn, req, rows, refused, failed)
	}
	ids, err := publishRows(ctx, conn, req.Schema, batch, rows)
	if err != nil && !bulk {
		return singleError(err, refused, failed)
	} else if err != nil {
		return dbError(err, refused, failed)
	}
	if !bulk {
		return map[string]any{"seq": req.Seq, "job_id": ids[0], "trace": traces[0]}
	}
	return map[string]any{"seq": req.Seq, "job_ids": ids}
}

// newBatch is a random (version 4) UUID: the batch id.
func newBatch() ([16]byte, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return b, err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b, nil
}

// publishRows stages rows (their batch id already set) and publishes them in one transaction:
// staged rows never commit (ZA006 at COMMIT), and a rejected batch rolls back whole.
func publishRows(ctx context.Context, conn *pgx.Conn, schema string, batch [16]byte, rows [][]any) ([]int64, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{schema, "bulk_staging"}, stagingColumns, pgx.CopyFromRows(rows)); err != nil {
		return nil, err
	}
	var ids []int64
	if err := tx.QueryRow(ctx, "SELECT "+quoteIdent(schema)+".publish_batch($1::uuid)", batch).Scan(&ids); err != nil {
		return nil, err
	}
	return ids, tx.Commit(ctx)
}

// perRowCommit is the mutant per_row_commit: each row its own batch and transaction, so rows
// before a rejected one stay committed although the answer names the right row.
func perRowCommit(ctx context.Context, conn *pgx.Conn, req *request, rows [][]any,
	refused func(any, any, *int, string) map[string]any, failed func(error) map[string]any) map[string]any {
	var ids []int64
	for k, row := range rows {
		batch, err := newBatch()
		if err != nil {
			return failed(err)
		}
		one := append([]any(nil), row...)
		one[0], one[1] = batch, int32(1)
		got, err := publishRows(ctx, conn, req.Schema, batch, [][]any{one})
		if err != nil {
			pgErr, d := parseDetail(err)
			if pgErr == nil || d.Code == nil {
				return failed(err)
			}
			n := k + 1
			return refused(pgErr.Code, *d.Code, &n, pgErr.Error())
		}
		ids = append(ids, got...)
	}
	return map[string]any{"seq": req.Seq, "job_ids": ids}
}

type detail struct {
	Code     *string `json:"code"`
	Row      *int    `json:"row"`
	SQLSTATE *string `json:"sqlstate"`
	Rule     *string `json:"rule"`
}

func parseDetail(err error) (*pgconn.PgError, detail) {
	var pgErr *pgconn.PgError
	var d detail
	if errors.As(err, &pgErr) && pgErr.Detail != "" {
		_ = json.Unmarshal([]byte(pgErr.Detail), &d)
	}
	return pgErr, d
}

// dbError maps a PostgreSQL error to a refusal: the SQLSTATE, the `code` and `row` of the JSON
// DETAIL that contract errors carry. Anything else (a lost connection) is the producer's error.
func dbError(err error, refused func(any, any, *int, string) map[string]any, failed func(error) map[string]any) map[string]any {
	pgErr, d := parseDetail(err)
	if pgErr == nil {
		return failed(err)
	}
	var code any
	if d.Code != nil {
		code = *d.Code
	}
	return refused(pgErr.Code, code, d.Row, pgErr.Error())
}

// singleError answers a one-row batch's rejection as insert_job would have refused the same
// call: a unique conflict is 23505, an invalid row the SQLSTATE and rule the DETAIL names.
func singleError(err error, refused func(any, any, *int, string) map[string]any, failed func(error) map[string]any) map[string]any {
	pgErr, d := parseDetail(err)
	if pgErr != nil && pgErr.Code == "ZA006" && d.Code != nil {
		switch *d.Code {
		case "bulk_unique_conflict":
			return refused("23505", nil, nil, pgErr.Error())
		case "bulk_row_invalid":
			if d.SQLSTATE != nil {
				return refused(*d.SQLSTATE, d.Rule, nil, pgErr.Error())
			}
		}
	}
	return dbError(err, refused, failed)
}
