// Command awa-example-producer is an example Awa producer in Go (pgx v5) for the runner's producer protocol.
//
// It reads one enqueue request per line on stdin (docs/adapter-protocol.md), enqueues it
// through <schema>.insert_job and answers on stdout. Up to inFlight requests are answered at
// once, each by a worker with a connection of its own (awa.Serve), in the order they finish.
// Canonical JSON, the BLAKE3 unique_key, partition choice and routing expectations are
// computed here from docs/contract.md; the kit is never called. It is an example, not a
// supported client.
//
// Env: AWA_CONFORMANCE_DSN (libpq key=value or URL DSN).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"example.com/awa-example-producer/internal/awa"
)

const (
	name    = "awa-example-go"
	version = "0.1.0"
	// inFlight is the hello's max_in_flight: how many requests the runner may send before
	// reading an answer. Each is one insert_job round trip, so a few workers keep the database
	// busy while others wait for it.
	inFlight = 8
)

func main() {
	awa.MainInFlight(name, version, []string{"enqueue", "errors"}, inFlight, handle)
}

func handle(ctx context.Context, conn *pgx.Conn, req *awa.Request) map[string]any {
	if req.Type != "enqueue" {
		return map[string]any{"seq": req.Seq, "error": "unknown request type " + strconv.Quote(req.Type)}
	}
	var j awa.Job // no job: the zero job, whose args are no typed value (an error answer)
	if req.Job != nil {
		j = *req.Job
	}
	return enqueue(ctx, conn, req.Schema, req.Seq, &j)
}

func enqueue(ctx context.Context, conn *pgx.Conn, schema string, seq int64, j *awa.Job) map[string]any {
	p, err := awa.Prepare(j)
	var r *awa.Refusal
	if errors.As(err, &r) {
		return awa.Refused(seq, nil, r.Code, nil, r.Msg)
	} else if err != nil {
		return awa.Failed(seq, err)
	}

	// Expectations: PostgreSQL computes the routing; telling it what this producer expects
	// makes it refuse (ZA001) a job this producer would have routed differently.
	opts := j.Opts
	if opts == nil {
		opts = map[string]any{}
	}
	hasExpectation := false
	for k := range opts {
		hasExpectation = hasExpectation || strings.HasPrefix(k, "expected_")
	}
	if !hasExpectation {
		var width int16
		if err := conn.QueryRow(ctx, "SELECT "+awa.QuoteIdent(schema)+".queue_enqueue_shards($1::text)", p.Queue).Scan(&width); err != nil {
			return awa.DBAnswer(seq, err, false)
		}
		for k, v := range awa.Route(int(width), p.OrderingKey, p.ConcurrencyKey).Expectations() {
			opts[k] = v
		}
	}
	optsJSON, err := json.Marshal(opts)
	if err != nil {
		return awa.Failed(seq, err)
	}

	// Explicit types on every parameter (one signature, no overloads); a nil pointer is NULL,
	// the function's default. Keys are bytea parameters ([]byte; nil is NULL); unique_states
	// is text cast to varbit, never bit(8), which pads '1111' to '11110000' before the
	// function can refuse it. run_at stays the request's text: PostgreSQL parses its offset
	// and microseconds itself.
	sql := "SELECT job_id FROM " + awa.QuoteIdent(schema) + ".insert_job($1::text, $2::text, $3::jsonb, " +
		"$4::smallint, $5::smallint, $6::timestamptz, $7::jsonb, $8::text[], $9::bytea, " +
		"$10::varbit, $11::bytea, $12::bytea, $13::jsonb)"
	tags := j.Tags
	if tags == nil {
		tags = []string{}
	}
	var jobID int64
	// One statement outside a transaction: committed before we answer. Inside a larger
	// transaction use tx.Begin (a savepoint) so that a 23505 leaves the transaction usable.
	err = conn.QueryRow(ctx, sql, j.Kind, p.Queue, string(p.Args), j.Priority, j.MaxAttempts, j.RunAt,
		p.Metadata, tags, p.UniqueKey, j.UniqueStates, p.OrderingKey, p.ConcurrencyKey,
		string(optsJSON)).Scan(&jobID)
	if err != nil {
		return awa.DBAnswer(seq, err, false)
	}
	return map[string]any{"seq": seq, "job_id": jobID, "trace": p.Trace}
}
