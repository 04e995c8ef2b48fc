// The producer protocol both commands speak (docs/adapter-protocol.md) and the client-side
// part of a job they share: canonical args, keys, physical queue, unique key, answers.
package awa

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// UniqueOpts is a job's `unique`: which parts go into the §2 pre-image.
type UniqueOpts struct {
	ByQueue      bool    `json:"by_queue"`
	ByArgs       bool    `json:"by_args"`
	PeriodBucket *string `json:"period_bucket"`
}

// PartitionOpts is a job's `partition`: a PartitionedQueue(queue, partitions) and its key (§5).
type PartitionOpts struct {
	KeyHex     string `json:"key_hex"`
	Partitions int    `json:"partitions"`
}

// Protocol is the producer protocol both commands speak: 3, in which a job also carries
// `metadata` and `max_attempts` and `run_at` may have any UTC offset.
const Protocol = 3

// Job is one job of a request. A nil pointer is a null (or, for the members protocol 3 adds,
// absent) member: the function's default.
type Job struct {
	Kind              string         `json:"kind"`
	Queue             string         `json:"queue"`
	Args              Typed          `json:"args"`
	Priority          *int16         `json:"priority"`
	MaxAttempts       *int16         `json:"max_attempts"`
	RunAt             *string        `json:"run_at"` // RFC 3339, microseconds, any offset
	Metadata          *Typed         `json:"metadata"`
	Tags              []string       `json:"tags"`
	OrderingKeyHex    *string        `json:"ordering_key_hex"`
	ConcurrencyKeyHex *string        `json:"concurrency_key_hex"`
	Unique            *UniqueOpts    `json:"unique"`
	UniqueStates      *string        `json:"unique_states"`
	Partition         *PartitionOpts `json:"partition"`
	Opts              map[string]any `json:"opts"`
}

// Request is one request line: an `enqueue` (Job), a `bulk` (Jobs) or a `stop`.
type Request struct {
	Type   string `json:"type"`
	Seq    int64  `json:"seq"`
	Schema string `json:"schema"`
	Job    *Job   `json:"job"`
	Jobs   []Job  `json:"jobs"`
}

// Handler answers one request other than `stop`. With several requests in flight it runs in
// several goroutines at once, each with a connection of its own.
type Handler func(ctx context.Context, conn *pgx.Conn, req *Request) map[string]any

// Main is a command's main that answers one request at a time: see MainInFlight.
func Main(name, version string, capabilities []string, handle Handler) {
	MainInFlight(name, version, capabilities, 1, handle)
}

// MainInFlight is a command's main: Serve with inFlight workers, and on an error a line on
// stderr and exit status 1.
func MainInFlight(name, version string, capabilities []string, inFlight int, handle Handler) {
	if err := Serve(name, version, capabilities, inFlight, handle); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Serve connects to AWA_CONFORMANCE_DSN (libpq key=value or URL DSN), says hello on stdout,
// and answers each request line on stdin with handle until `stop` or the end of stdin.
//
// inFlight workers answer the requests, each on its own connection: a pgx.Conn runs one
// statement at a time, so requests answered at once need a connection each. Above 1 the
// hello declares it as `max_in_flight`, and the runner may send that many requests before
// reading an answer; each answer carries its request's seq and they come in any order.
func Serve(name, version string, capabilities []string, inFlight int, handle Handler) error {
	ctx := context.Background()
	dsn := os.Getenv("AWA_CONFORMANCE_DSN")
	if dsn == "" {
		return errors.New("AWA_CONFORMANCE_DSN is not set (the runner sets it)")
	}
	// Every connection is opened before the hello: an unreachable database fails the start,
	// not a request.
	conns := make([]*pgx.Conn, inFlight)
	for i := range conns {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		conns[i] = conn
	}

	out := &lineWriter{w: bufio.NewWriter(os.Stdout)}
	hello := map[string]any{"type": "hello", "protocol": Protocol,
		"implementation": map[string]string{"name": name, "version": version},
		"capabilities":   capabilities}
	if inFlight > 1 {
		hello["max_in_flight"] = inFlight // absent, the runner sends one request at a time
	}
	if err := out.send(hello); err != nil {
		return err
	}

	// The channel is unbuffered: the reader hands a request over only when a worker is free to
	// take it, so no request waits in a queue. A worker writes its answer only after handle
	// returns, that is after the request's statement has committed.
	requests := make(chan *Request)
	var wg sync.WaitGroup
	for _, conn := range conns {
		wg.Go(func() {
			for req := range requests {
				out.send(handle(ctx, conn, req)) // a failed write is kept in out.err
			}
		})
	}
	err := read(os.Stdin, requests)
	// No more requests (stop, the end of stdin or a line that is not JSON): the workers answer
	// every request they took, then end.
	close(requests)
	wg.Wait()
	if err != nil {
		return err
	}
	return out.err
}

// read hands each request line of in to the workers, until `stop` or the end of in.
func read(in io.Reader, requests chan<- *Request) error {
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 0, 64*1024), 4<<20) // the protocol caps a line at 1 MiB
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		if line == "" {
			continue
		}
		var req Request
		if err := json.Unmarshal([]byte(line), &req); err != nil {
			return fmt.Errorf("request is not JSON: %w", err)
		}
		if req.Type == "stop" {
			return nil
		}
		requests <- &req
	}
	return lines.Err()
}

// lineWriter writes one JSON line per answer. Workers answer at once, so a line is written
// and flushed whole under the mutex: two answers never interleave. The first error is kept
// (stdout closed: the runner is gone) and every later line is dropped.
type lineWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (o *lineWriter) send(v any) error {
	b, err := json.Marshal(v)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return o.err
	}
	if err != nil {
		o.err = err
		return err
	}
	o.w.Write(append(b, '\n'))
	o.err = o.w.Flush() // the runner may be waiting for this very line
	return o.err
}

// Prepared is what a producer computes for one job before SQL.
type Prepared struct {
	Args           []byte // canonical JSON (§1), the exact bytes stored
	Queue          string // the physical queue (§5)
	OrderingKey    []byte // nil is absent, []byte{} the empty key; a partition's key if none
	ConcurrencyKey []byte
	UniqueKey      []byte         // nil without `unique`
	Metadata       *string        // the metadata's canonical JSON; nil for the default {}
	Trace          map[string]any // canonical args, physical queue, unique key and pre-image
}

// Prepare computes the client-side part of j. A *Refusal error is the contract refusing the
// job before SQL (too_deep, key_too_long, ...); another error is the producer's own.
func Prepare(j *Job) (*Prepared, error) {
	argsValue, err := FromTyped(j.Args)
	var args []byte
	if err == nil {
		args, err = CanonicalJSON(argsValue)
	}
	if err != nil {
		return nil, err
	}
	orderingHex := j.OrderingKeyHex
	if orderingHex == nil && j.Partition != nil {
		// A PartitionedQueue job carries its key as the ordering key of the physical queue (§5).
		orderingHex = &j.Partition.KeyHex
	}
	p := &Prepared{Args: args, Queue: j.Queue}
	if j.Metadata != nil {
		// Typed like args and written the same way, so the stored jsonb holds exactly the
		// numbers and strings asked (encoding/json would turn a big integer into a float).
		v, err := FromTyped(*j.Metadata)
		var m []byte
		if err == nil {
			m, err = CanonicalJSON(v)
		}
		if err != nil {
			return nil, err
		}
		text := string(m)
		p.Metadata = &text
	}
	if p.OrderingKey, err = DecodeKey(orderingHex); err != nil {
		return nil, err
	}
	if p.ConcurrencyKey, err = DecodeKey(j.ConcurrencyKeyHex); err != nil {
		return nil, err
	}
	for _, k := range []struct {
		field string
		key   []byte
	}{{"ordering_key", p.OrderingKey}, {"concurrency_key", p.ConcurrencyKey}} {
		if len(k.key) > maxKey {
			return nil, &Refusal{"key_too_long", fmt.Sprintf("%s is %d bytes (max %d)", k.field, len(k.key), maxKey)}
		}
	}
	if j.Partition != nil {
		pk, err := hex.DecodeString(j.Partition.KeyHex)
		if err != nil {
			return nil, err
		}
		p.Queue = physicalQueue(j.Queue, pk, j.Partition.Partitions)
	}
	p.Trace = map[string]any{"canonical_args": string(args), "physical_queue": p.Queue}
	if u := j.Unique; u != nil {
		var q *string
		if u.ByQueue {
			q = &p.Queue
		}
		var a []byte
		if u.ByArgs {
			a = args
		}
		var bucket *int64
		if u.PeriodBucket != nil {
			b, err := strconv.ParseInt(*u.PeriodBucket, 10, 64)
			if err != nil {
				return nil, err
			}
			bucket = &b
		}
		pre, key := UniqueKey(j.Kind, q, a, bucket)
		p.UniqueKey = key
		p.Trace["unique_key_hex"] = hex.EncodeToString(key)
		p.Trace["unique_preimage_hex"] = hex.EncodeToString(pre)
	}
	return p, nil
}

// DecodeKey turns a request's hex key into bytes: nil stays absent, "" is the empty key.
func DecodeKey(h *string) ([]byte, error) {
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

// QuoteIdent quotes a schema name for SQL text.
func QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Refused is a `refused` answer; row (the row of a bulk request) is left out when nil.
func Refused(seq int64, sqlstate, code any, row *int, msg string) map[string]any {
	r := map[string]any{"sqlstate": sqlstate, "code": code, "message": msg}
	if row != nil {
		r["row"] = *row
	}
	return map[string]any{"seq": seq, "refused": r}
}

// Failed is an `error` answer: the producer could not do what was asked.
func Failed(seq int64, err error) map[string]any {
	return map[string]any{"seq": seq, "error": err.Error()}
}

// Detail is the JSON DETAIL that contract errors carry.
type Detail struct {
	Code     *string `json:"code"`
	Row      *int    `json:"row"`
	SQLSTATE *string `json:"sqlstate"`
	Rule     *string `json:"rule"`
}

// ParseError is err's PostgreSQL error (nil for another error, such as a lost connection)
// and its JSON DETAIL (empty when there is none).
func ParseError(err error) (*pgconn.PgError, Detail) {
	var pgErr *pgconn.PgError
	var d Detail
	if errors.As(err, &pgErr) && pgErr.Detail != "" {
		_ = json.Unmarshal([]byte(pgErr.Detail), &d)
	}
	return pgErr, d
}

// DBAnswer maps a PostgreSQL error to a refusal: the SQLSTATE, the `code` of the JSON DETAIL
// and, with rows (a bulk request), its `row`. Anything else is the producer's error.
func DBAnswer(seq int64, err error, rows bool) map[string]any {
	pgErr, d := ParseError(err)
	if pgErr == nil {
		return Failed(seq, err)
	}
	var code any
	if d.Code != nil {
		code = *d.Code
	}
	row := d.Row
	if !rows {
		row = nil
	}
	return Refused(seq, pgErr.Code, code, row, pgErr.Error())
}
