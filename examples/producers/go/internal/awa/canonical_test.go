// Checks the canonical JSON encoder and unique_key against the frozen vectors (go test).
package awa

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

type vectorFile struct {
	Vectors []struct {
		ID       string `json:"id"`
		Input    json.RawMessage
		Expected map[string]string
	} `json:"vectors"`
}

func load(t *testing.T, release, family string) vectorFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "..", "vectors", release, family+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f vectorFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// check compares a result with a vector's expected value or expected refusal code.
func check(t *testing.T, want map[string]string, field, got string, err error) {
	t.Helper()
	var r *Refusal
	switch {
	case want["error"] != "":
		if !errors.As(err, &r) || r.Code != want["error"] {
			t.Fatalf("want refusal %q, got %q, %v", want["error"], got, err)
		}
	case err != nil:
		t.Fatal(err)
	case got != want[field]:
		t.Fatalf("got %s, want %s", got, want[field])
	}
}

func TestVectors(t *testing.T) {
	for _, release := range []string{"v1", "v1.1"} {
		for _, v := range load(t, release, "canonical_json").Vectors {
			t.Run(release+"/"+v.ID, func(t *testing.T) {
				var in struct{ Value Typed }
				if err := json.Unmarshal(v.Input, &in); err != nil {
					t.Fatal(err)
				}
				val, err := FromTyped(in.Value)
				var out []byte
				if err == nil {
					out, err = CanonicalJSON(val)
				}
				check(t, v.Expected, "canonical_hex", hex.EncodeToString(out), err)
			})
		}
		for _, v := range load(t, release, "unique_key").Vectors {
			t.Run(release+"/"+v.ID, func(t *testing.T) {
				var in struct {
					Kind         string
					Queue        *string
					Args         *Typed
					PeriodBucket *string `json:"period_bucket"`
				}
				if err := json.Unmarshal(v.Input, &in); err != nil {
					t.Fatal(err)
				}
				var args []byte
				var err error
				if in.Args != nil {
					var val any
					if val, err = FromTyped(*in.Args); err == nil {
						args, err = CanonicalJSON(val)
					}
				}
				var bucket *int64
				if in.PeriodBucket != nil {
					b, perr := strconv.ParseInt(*in.PeriodBucket, 10, 64)
					if perr != nil {
						t.Fatal(perr)
					}
					bucket = &b
				}
				got := ""
				if err == nil {
					_, key := UniqueKey(in.Kind, in.Queue, args, bucket)
					got = hex.EncodeToString(key)
				}
				check(t, v.Expected, "unique_key_hex", got, err)
			})
		}
	}
}
