// Command awa-bulk-producer is an example Awa producer in Go (pgx v5) for the staged bulk path.
//
// It reads one request per line on stdin (docs/adapter-protocol.md): a `bulk` request is one
// batch, an `enqueue` request a batch of one row. Every row is COPYed into
// <schema>.bulk_staging with the routing this program computed (digest, shard, route source,
// docs/contract.md §4–§8, §14) and its own canonical JSON and BLAKE3 unique_key (§1, §2), then
// <schema>.publish_batch checks and publishes the batch in the same transaction. The kit is
// never called. It is an example, not a supported client.
//
// Env: AWA_CONFORMANCE_DSN (libpq key=value or URL DSN).
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"example.com/awa-example-producer/internal/awa"
)

const (
	name    = "awa-example-bulk"
	version = "0.1.0"
)

func main() {
	awa.Main(name, version, []string{"enqueue", "bulk", "errors"}, handle)
}

func handle(ctx context.Context, conn *pgx.Conn, req *awa.Request) map[string]any {
	switch {
	case req.Type == "enqueue" && req.Job != nil:
		return publish(ctx, conn, req, []awa.Job{*req.Job}, false)
	case req.Type == "bulk" && len(req.Jobs) > 0:
		return publish(ctx, conn, req, req.Jobs, true)
	}
	return map[string]any{"seq": req.Seq, "error": "unknown or empty request of type " + strconv.Quote(req.Type)}
}

// stagingColumns are the columns a producer may write (never staged_by, filled by its default).
var stagingColumns = []string{"batch_id", "row_no", "kind", "queue", "args", "priority",
	"max_attempts", "run_at", "metadata", "tags", "unique_key", "unique_states", "ordering_key",
	"concurrency_key", "concurrency_digest", "enqueue_shard", "route_source"}

// rowRefusal is a client-side refusal of one row of the request.
type rowRefusal struct {
	row  int
	code string
	msg  string
}

// stageRow computes the staging row of a job except its batch id: the client-side part of the
// job, then the routing at the queue's width. width looks a queue's width up (cached).
func stageRow(j *awa.Job, rowNo int, width func(string) (int, error)) ([]any, map[string]any, *rowRefusal, error) {
	if len(j.Opts) > 0 {
		// The staging table has no opts: a request with opts is not something this path can do.
		return nil, nil, nil, errSkip
	}
	p, err := awa.Prepare(j)
	var r *awa.Refusal
	if errors.As(err, &r) {
		return nil, nil, &rowRefusal{rowNo, r.Code, r.Msg}, nil
	} else if err != nil {
		return nil, nil, nil, err
	}
	w, err := width(p.Queue)
	if err != nil {
		return nil, nil, nil, err
	}
	rt := awa.Route(w, p.OrderingKey, p.ConcurrencyKey)
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
		// COPY is binary, so run_at goes as a time.Time, not text. time.Parse keeps the
		// offset's instant and every fractional digit; pgx sends microseconds, all a request
		// holds.
		t, err := time.Parse(time.RFC3339Nano, *j.RunAt)
		if err != nil {
			return nil, nil, nil, err
		}
		runAt = t
	}
	// A nil pointer (priority, max_attempts, metadata) stages NULL: the default, as in insert_job.
	values := []any{nil, int32(rowNo), j.Kind, p.Queue, string(p.Args), j.Priority, j.MaxAttempts,
		runAt, p.Metadata, tags, p.UniqueKey, states, p.OrderingKey, p.ConcurrencyKey, rt.Digest,
		rt.Shard, rt.Source}
	return values, p.Trace, nil, nil
}

// varbit is a '0'/'1' string as a bit string of exactly that length (leftmost bit first).
func varbit(bits string) (pgtype.Bits, error) {
	b := pgtype.Bits{Bytes: make([]byte, (len(bits)+7)/8), Len: int32(len(bits)), Valid: true}
	for i, c := range bits {
		switch c {
		case '1':
			b.Bytes[i/8] |= 0x80 >> (i % 8)
		case '0':
		default:
			return b, fmt.Errorf("unique_states %q is not a string of 0 and 1", bits)
		}
	}
	return b, nil
}

var errSkip = errors.New("skip")

// publish stages jobs as rows 1..n of a new batch and publishes them in one transaction.
// bulk is false for an enqueue request: its batch errors are answered as insert_job's would be.
func publish(ctx context.Context, conn *pgx.Conn, req *awa.Request, jobs []awa.Job, bulk bool) map[string]any {
	schema := awa.QuoteIdent(req.Schema)
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
		return awa.Failed(req.Seq, err)
	}
	rows := make([][]any, 0, len(jobs))
	var traces []map[string]any
	for i := range jobs {
		rowNo := i + 1 // rows are numbered from 1 in every answer and error
		values, trace, ref, err := stageRow(&jobs[i], rowNo, width)
		if errors.Is(err, errSkip) {
			return map[string]any{"seq": req.Seq, "skipped": true, "reason": "the staged bulk path has no opts column"}
		}
		if err != nil {
			return awa.DBAnswer(req.Seq, err, bulk)
		}
		if ref != nil {
			row := &ref.row
			if !bulk {
				row = nil // an enqueue answer names no row
			}
			return awa.Refused(req.Seq, nil, ref.code, row, ref.msg)
		}
		values[0] = batch
		rows = append(rows, values)
		traces = append(traces, trace)
	}

	ids, err := publishRows(ctx, conn, req.Schema, batch, rows)
	if err != nil && !bulk {
		return singleError(req.Seq, err)
	} else if err != nil {
		return awa.DBAnswer(req.Seq, err, true)
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
	if err := tx.QueryRow(ctx, "SELECT "+awa.QuoteIdent(schema)+".publish_batch($1::uuid)", batch).Scan(&ids); err != nil {
		return nil, err
	}
	return ids, tx.Commit(ctx)
}

// singleError answers a one-row batch's rejection as insert_job would have refused the same
// call: a unique conflict is 23505, an invalid row the SQLSTATE and rule the DETAIL names.
func singleError(seq int64, err error) map[string]any {
	pgErr, d := awa.ParseError(err)
	if pgErr != nil && pgErr.Code == "ZA006" && d.Code != nil {
		switch *d.Code {
		case "bulk_unique_conflict":
			return awa.Refused(seq, "23505", nil, nil, pgErr.Error())
		case "bulk_row_invalid":
			if d.SQLSTATE != nil {
				return awa.Refused(seq, *d.SQLSTATE, d.Rule, nil, pgErr.Error())
			}
		}
	}
	return awa.DBAnswer(seq, err, false)
}
