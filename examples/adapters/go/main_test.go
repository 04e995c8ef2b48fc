// Tests check the adapter against the worked examples of docs/contract.md and the protocol's framing.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

func TestWorkedExamples(t *testing.T) {
	if got := hash64(nil); got != 14695981039346656037 || got%8 != 5 {
		t.Errorf(`hash64("") = %d`, got)
	}
	if got := hash64([]byte("tenant-42")); got != 805962331363418024 || got%8 != 0 {
		t.Errorf(`hash64("tenant-42") = %d`, got)
	}
	if got := partitionHash64([]byte("tenant-42")); got != 169215600803268862 || got%4 != 2 {
		t.Errorf(`partition_hash64("tenant-42") = %d`, got)
	}
	for key, want := range map[string]string{
		"":          "9532f040fb7b2ab29d6804214aec37870a983b3816c1cc9bf4609616763631e3",
		"tenant-42": "9222cda824076fe5621e59be254c202926ea430e9cfac7e46ef3047de2aa941c",
	} {
		d := concurrencyDigest([]byte(key))
		if got := hex.EncodeToString(d[:]); got != want {
			t.Errorf("digest(%q) = %s, want %s", key, got, want)
		}
	}
	if got := concurrencyShard(concurrencyDigest([]byte("tenant-42")), 8); got != 5 {
		t.Errorf(`concurrency_shard("tenant-42", 8) = %d, want 5`, got)
	}
	out, err := fRoutingPrecedence(json.RawMessage(`{"width":8,"ordering_key_hex":"` + hex.EncodeToString([]byte("order-1")) + `","concurrency_key_hex":null}`))
	if err != nil {
		t.Fatal(err)
	}
	r := out.(routingOut)
	if r.RouteSource != "ordering_key" || r.EnqueueShard == nil || *r.EnqueueShard != 1 ||
		r.ConcurrencyDigestHex == nil || *r.ConcurrencyDigestHex != "99fd36b63262df79cb07c276facc37ba3f140e229d2a1536c3c8d0a066b245ef" {
		t.Errorf("routing order-1 = %+v", r)
	}
}

func TestProtocolSession(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"request","seq":1,"family":"unique_states","id":"a","input":{"mask":31}}`,
		`{"type":"request","seq":2,"family":"move_shard","id":"b","input":{"retained_shard":9}}`,
		`{"type":"request","seq":3,"family":"unique_key","id":"c","input":{}}`,
		`{"type":"stop"}`,
	}, "\n") + "\n"
	var out, logs bytes.Buffer
	if code := run(strings.NewReader(in), &out, &logs); code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[0], `"type":"hello"`) {
		t.Fatalf("unexpected session: %q", lines)
	}
	if !strings.Contains(lines[1], `"bits":"11111000"`) || !strings.Contains(lines[2], `"error"`) || !strings.Contains(lines[3], `"skipped":true`) {
		t.Errorf("answers: %q", lines[1:])
	}
}
