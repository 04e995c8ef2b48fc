// Command awa-conformance-adapter is an unsupported example producer adapter (protocol v1) written in Go from docs/contract.md alone.
//
// It speaks the JSON-lines protocol of docs/adapter-protocol.md on stdin/stdout and implements
// the families whose algorithms need only Go's standard library. canonical_json and
// unique_key are not declared: they need BLAKE3, which Go's standard library does not have.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
)

const protocolVersion = 1

// version is the adapter's own version, reported in hello.
const version = "0.1.0"

// request is one runner → adapter line; Input stays raw so each family decodes it strictly.
type request struct {
	Type   string          `json:"type"`
	Seq    *uint64         `json:"seq"`
	Family string          `json:"family"`
	ID     string          `json:"id"`
	Input  json.RawMessage `json:"input"`
}

func main() {
	os.Exit(run(os.Stdin, os.Stdout, os.Stderr))
}

// run serves one protocol session and returns the process exit status.
func run(in io.Reader, out io.Writer, logw io.Writer) int {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	// The runner may pipeline every request before reading: flush after each answer so it
	// sees answers as they are produced.
	send := func(v interface{}) bool {
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(logw, "awa-go-adapter: writing stdout: %v\n", err)
			return false
		}
		if err := w.Flush(); err != nil {
			fmt.Fprintf(logw, "awa-go-adapter: flushing stdout: %v\n", err)
			return false
		}
		return true
	}

	if !send(map[string]interface{}{
		"type":     "hello",
		"protocol": protocolVersion,
		"implementation": map[string]string{
			"name":    "awa-conformance go example adapter",
			"version": version,
		},
		"capabilities": capabilities(),
	}) {
		return 1
	}

	sc := bufio.NewScanner(in)
	// A 4096-byte key is 8192 hex chars; leave generous room for future inputs.
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(trimSpace(line)) == 0 {
			continue
		}
		var req request
		if err := json.Unmarshal(line, &req); err != nil {
			// Answer every request: if a seq can still be recovered, report the error on it;
			// otherwise there is nobody to answer and stderr is the only place to say so.
			if seq, ok := salvageSeq(line); ok {
				if !send(map[string]interface{}{"seq": seq, "error": fmt.Sprintf("cannot parse request: %v", err)}) {
					return 1
				}
				continue
			}
			fmt.Fprintf(logw, "awa-go-adapter: ignoring a line that is not a JSON request and has no seq: %v\n", err)
			continue
		}
		if req.Type == "stop" {
			return 0
		}
		if req.Seq == nil {
			fmt.Fprintf(logw, "awa-go-adapter: ignoring a message without seq (type %q)\n", req.Type)
			continue
		}
		seq := *req.Seq
		if req.Type != "request" {
			if !send(map[string]interface{}{"seq": seq, "error": fmt.Sprintf("unknown message type %q: expected \"request\" or \"stop\"", req.Type)}) {
				return 1
			}
			continue
		}
		fam, ok := families[req.Family]
		if !ok {
			if !send(map[string]interface{}{"seq": seq, "skipped": true, "reason": fmt.Sprintf("family %s is not implemented by the Go example adapter", req.Family)}) {
				return 1
			}
			continue
		}
		output, err := fam(req.Input)
		var answer interface{}
		if err != nil {
			answer = map[string]interface{}{"seq": seq, "error": fmt.Sprintf("%s %s: %v", req.Family, req.ID, err)}
		} else {
			answer = map[string]interface{}{"seq": seq, "output": output}
		}
		if !send(answer) {
			return 1
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(logw, "awa-go-adapter: reading stdin: %v\n", err)
		return 1
	}
	return 0 // EOF is a normal end, like stop.
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r' || b[0] == '\n') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r' || b[len(b)-1] == '\n') {
		b = b[:len(b)-1]
	}
	return b
}

// salvageSeq finds `"seq":<digits>` in a line that failed to decode as a request.
func salvageSeq(line []byte) (uint64, bool) {
	i := bytes.Index(line, []byte(`"seq"`))
	if i < 0 {
		return 0, false
	}
	rest := trimSpace(line[i+len(`"seq"`):])
	if len(rest) == 0 || rest[0] != ':' {
		return 0, false
	}
	rest = trimSpace(rest[1:])
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	return v, err == nil
}
