// Command awa-example-producer is an example Awa producer in Go (pgx v5) for the runner's producer protocol.
//
// It reads one enqueue request per line on stdin (docs/adapter-protocol.md), enqueues it
// through <schema>.insert_job and answers on stdout. Canonical JSON, the BLAKE3 unique_key,
// partition choice and routing expectations are computed here from docs/contract.md; the kit
// is never called. It is an example, not a supported client.
//
// Env: AWA_CONFORMANCE_DSN (libpq key=value or URL DSN), AWA_EXAMPLE_MUTANT (a deliberately
// broken variant, see README.md).
package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	name    = "awa-example-go"
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

type request struct {
	Type   string `json:"type"`
	Seq    int64  `json:"seq"`
	Schema string `json:"schema"`
	Job    job    `json:"job"`
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
		"capabilities":   []string{"enqueue", "errors"}}); err != nil {
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
		switch req.Type {
		case "stop":
			return nil
		case "enqueue":
		default:
			if err := send(map[string]any{"seq": req.Seq, "error": "unknown request type " + strconv.Quote(req.Type)}); err != nil {
				return err
			}
			continue
		}
		answer := enqueue(ctx, conn, &req)
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
	if mutant == "latin1_keys" {
		// A producer that holds keys as text and encodes them as Latin-1 instead of UTF-8.
		s := string(b)
		l := make([]byte, 0, len(s))
		for _, r := range s {
			if r > 0xff {
				r = '?'
			}
			l = append(l, byte(r))
		}
		b = l
	}
	return b, nil
}

// bindKey is what goes to the bytea parameter: the bytes themselves.
func bindKey(k []byte) any {
	if mutant == "text_keys" && k != nil {
		return strings.ToValidUTF8(string(k), "\uFFFD") // a string is sent as text: wrong
	}
	return k
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func enqueue(ctx context.Context, conn *pgx.Conn, req *request) map[string]any {
	j := &req.Job
	refused := func(sqlstate, code any, msg string) map[string]any {
		return map[string]any{"seq": req.Seq, "refused": map[string]any{"sqlstate": sqlstate, "code": code, "message": msg}}
	}
	failed := func(err error) map[string]any { return map[string]any{"seq": req.Seq, "error": err.Error()} }

	argsValue, err := fromTyped(j.Args)
	var args []byte
	if err == nil {
		args, err = canonicalJSON(argsValue)
	}
	var r *refusal
	if errors.As(err, &r) {
		return refused(nil, r.code, r.msg)
	} else if err != nil {
		return failed(err)
	}
	orderingHex := j.OrderingKeyHex
	if orderingHex == nil && j.Partition != nil {
		// A PartitionedQueue job carries its key as the ordering key of the physical queue (§5).
		orderingHex = &j.Partition.KeyHex
	}
	orderingKey, err := decodeKey(orderingHex)
	if err != nil {
		return failed(err)
	}
	concurrencyKey, err := decodeKey(j.ConcurrencyKeyHex)
	if err != nil {
		return failed(err)
	}
	if mutant == "drop_ordering_key" {
		orderingKey = nil
	}
	if mutant == "no_concurrency_key" {
		concurrencyKey = nil
	}
	for _, k := range []struct {
		field string
		key   []byte
	}{{"ordering_key", orderingKey}, {"concurrency_key", concurrencyKey}} {
		if len(k.key) > maxKey {
			return refused(nil, "key_too_long", fmt.Sprintf("%s is %d bytes (max %d)", k.field, len(k.key), maxKey))
		}
	}
	queue := j.Queue
	if j.Partition != nil {
		pk, err := hex.DecodeString(j.Partition.KeyHex)
		if err != nil {
			return failed(err)
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
				return failed(err)
			}
			bucket = &b
		}
		pre, key := uniqueKey(j.Kind, q, a, bucket)
		uniqueKeyBytes = key
		trace["unique_key_hex"] = hex.EncodeToString(key)
		trace["unique_preimage_hex"] = hex.EncodeToString(pre)
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
		if err := conn.QueryRow(ctx, "SELECT "+quoteIdent(req.Schema)+".queue_enqueue_shards($1::text)", queue).Scan(&width); err != nil {
			return dbError(err, refused, failed)
		}
		for k, v := range expectations(int(width), orderingKey, concurrencyKey) {
			opts[k] = v
		}
	}
	optsJSON, err := json.Marshal(opts)
	if err != nil {
		return failed(err)
	}

	// Explicit types on every parameter (one signature, no overloads). Keys are bytea
	// parameters ([]byte; nil is NULL); unique_states is text cast to varbit, never bit(8),
	// which pads '1111' to '11110000' before the function can refuse it.
	states := "$8::varbit"
	if mutant == "bit8_cast" {
		states = "$8::bit(8)"
	}
	sql := "SELECT job_id FROM " + quoteIdent(req.Schema) + ".insert_job($1::text, $2::text, $3::jsonb, " +
		"$4::smallint, NULL::smallint, $5::timestamptz, NULL::jsonb, $6::text[], $7::bytea, " + states +
		", $9::bytea, $10::bytea, $11::jsonb)"
	tags := j.Tags
	if tags == nil {
		tags = []string{}
	}
	var jobID int64
	// One statement outside a transaction: committed before we answer. Inside a larger
	// transaction use tx.Begin (a savepoint) so that a 23505 leaves the transaction usable.
	err = conn.QueryRow(ctx, sql, j.Kind, queue, string(args), j.Priority, j.RunAt, tags,
		uniqueKeyBytes, j.UniqueStates, bindKey(orderingKey), bindKey(concurrencyKey), string(optsJSON)).Scan(&jobID)
	if err != nil {
		return dbError(err, refused, failed)
	}
	return map[string]any{"seq": req.Seq, "job_id": jobID, "trace": trace}
}

// dbError maps a PostgreSQL error to a refusal: the SQLSTATE, and the `code` of the JSON
// DETAIL that contract errors carry. Anything else (a lost connection) is the producer's error.
func dbError(err error, refused func(any, any, string) map[string]any, failed func(error) map[string]any) map[string]any {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return failed(err)
	}
	var code any
	var detail struct {
		Code *string `json:"code"`
	}
	if pgErr.Detail != "" && json.Unmarshal([]byte(pgErr.Detail), &detail) == nil && detail.Code != nil {
		code = *detail.Code
	}
	return refused(pgErr.Code, code, pgErr.Error())
}
