// Canonical JSON v1 (docs/contract.md §1) over Go values, and the BLAKE3 unique_key (§2).
package awa

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"lukechampine.com/blake3"
)

// maxDepth: a value inside 128 nested arrays/objects is accepted, inside 129 refused.
const maxDepth = 128

// Refusal is a client-side refusal: the contract refuses the input and nothing is enqueued.
type Refusal struct{ Code, Msg string }

func (r *Refusal) Error() string { return r.Code + ": " + r.Msg }

// Values the encoder takes: nil, bool, int64, uint64 (2^63..2^64-1), float64, string, []any,
// and map[string]any (a map keeps the last value of a repeated key, as the contract wants).
// Never a struct: encoding/json writes fields in declaration order and omitempty drops members.
type canonicalWriter struct {
	buf bytes.Buffer
}

// CanonicalJSON is the §1 text of v (see canonicalWriter for the Go values it takes).
func CanonicalJSON(v any) ([]byte, error) {
	w := &canonicalWriter{}
	if err := w.value(v, 0); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

func (w *canonicalWriter) value(v any, depth int) error {
	switch x := v.(type) {
	case nil:
		w.buf.WriteString("null")
	case bool:
		w.buf.WriteString(strconv.FormatBool(x))
	case int64:
		w.buf.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		w.buf.WriteString(strconv.FormatUint(x, 10))
	case float64:
		w.buf.WriteString(formatFloat(x))
	case string:
		return w.str(x)
	case []any:
		if depth >= maxDepth {
			return &Refusal{"too_deep", fmt.Sprintf("args nest deeper than %d arrays/objects", maxDepth)}
		}
		w.buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.value(e, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
	case map[string]any:
		if depth >= maxDepth {
			return &Refusal{"too_deep", fmt.Sprintf("args nest deeper than %d arrays/objects", maxDepth)}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Go compares strings bytewise: that is UTF-8 byte order, the contract's order.
		sort.Strings(keys)
		w.buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.str(k); err != nil {
				return err
			}
			w.buf.WriteByte(':')
			if err := w.value(x[k], depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
	default:
		return fmt.Errorf("canonical JSON: unsupported Go type %T", v)
	}
	return nil
}

func (w *canonicalWriter) str(s string) error {
	// A Go string may hold any bytes; the canonical form is defined for Unicode text only.
	if !utf8.ValidString(s) {
		return &Refusal{"invalid_utf8", "a string is not valid UTF-8"}
	}
	w.buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			w.buf.WriteString(`\"`)
		case r == '\\':
			w.buf.WriteString(`\\`)
		case r == '\b':
			w.buf.WriteString(`\b`)
		case r == '\f':
			w.buf.WriteString(`\f`)
		case r == '\n':
			w.buf.WriteString(`\n`)
		case r == '\r':
			w.buf.WriteString(`\r`)
		case r == '\t':
			w.buf.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&w.buf, `\u%04x`, r)
		default:
			w.buf.WriteRune(r)
		}
	}
	w.buf.WriteByte('"')
	return nil
}

// formatFloat lays out the shortest round-trip digits (FormatFloat 'e' with precision -1:
// nearest, ties to even) by the contract's table. encoding/json's thresholds differ.
func formatFloat(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null" // NaN and the infinities have no JSON form
	}
	sign := ""
	if math.Signbit(f) {
		sign = "-"
	}
	digits, k := "0", 1
	if f != 0 {
		e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // "d.ddde±xx"
		mant, exp, _ := strings.Cut(e, "e")
		digits = strings.Replace(mant, ".", "", 1)
		x, _ := strconv.Atoi(exp)
		k = x + 1 // |f| = 0.d1d2... x 10^k
	}
	n := len(digits)
	switch {
	case k-n >= 0 && k <= 16:
		return sign + digits + strings.Repeat("0", k-n) + ".0"
	case k > 0 && k <= 16:
		return sign + digits[:k] + "." + digits[k:]
	case k > -5 && k <= 0:
		return sign + "0." + strings.Repeat("0", -k) + digits
	default:
		s := sign + digits[:1]
		if n > 1 {
			s += "." + digits[1:]
		}
		x := k - 1
		if x >= 0 {
			return s + "e+" + strconv.Itoa(x)
		}
		return s + "e-" + strconv.Itoa(-x)
	}
}

// UniqueKey returns the §2 pre-image and key: kind, then 0x00 and each present field; the key
// is the first 16 bytes of BLAKE3-256.
func UniqueKey(kind string, queue *string, args []byte, periodBucket *int64) (preimage, key []byte) {
	preimage = []byte(kind)
	if queue != nil {
		preimage = append(append(preimage, 0), *queue...)
	}
	if args != nil {
		preimage = append(append(preimage, 0), args...)
	}
	if periodBucket != nil {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(*periodBucket))
		preimage = append(append(preimage, 0), b[:]...)
	}
	sum := blake3.Sum256(preimage)
	return preimage, sum[:16]
}

// Typed is an ADR 0002 typed value, as the runner sends `args`.
type Typed struct {
	Type      string          `json:"type"`
	Value     json.RawMessage `json:"value"`
	Bits      string          `json:"bits"`
	Container string          `json:"container"`
	Depth     int             `json:"depth"`
	Key       string          `json:"key"`
}

var (
	i64Min = big.NewInt(math.MinInt64)
	u64Max = new(big.Int).SetUint64(math.MaxUint64)
)

// FromTyped decodes a typed value into the encoder's Go values.
func FromTyped(t Typed) (any, error) {
	switch t.Type {
	case "null":
		return nil, nil
	case "bool":
		var b bool
		err := json.Unmarshal(t.Value, &b)
		return b, err
	case "int":
		var s string
		if err := json.Unmarshal(t.Value, &s); err != nil {
			return nil, err
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("int value %q is not a decimal", s)
		}
		if n.Cmp(i64Min) < 0 || n.Cmp(u64Max) > 0 {
			return nil, &Refusal{"integer_out_of_range", "integer " + s + " is outside [-2^63, 2^64-1]"}
		}
		if n.IsInt64() {
			return n.Int64(), nil
		}
		return n.Uint64(), nil
	case "float":
		b, err := hex.DecodeString(t.Bits)
		if err != nil || len(b) != 8 {
			return nil, fmt.Errorf("float bits %q are not 16 hex digits", t.Bits)
		}
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case "string":
		var s string
		err := json.Unmarshal(t.Value, &s)
		return s, err
	case "array":
		var items []Typed
		if err := json.Unmarshal(t.Value, &items); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(items))
		for _, it := range items {
			v, err := FromTyped(it)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case "object":
		var members [][2]json.RawMessage
		if err := json.Unmarshal(t.Value, &members); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(members))
		for _, m := range members {
			var k string
			var it Typed
			if err := json.Unmarshal(m[0], &k); err != nil {
				return nil, err
			}
			if err := json.Unmarshal(m[1], &it); err != nil {
				return nil, err
			}
			v, err := FromTyped(it)
			if err != nil {
				return nil, err
			}
			out[k] = v // a repeated key: the last occurrence wins
		}
		return out, nil
	case "nested":
		var it Typed
		if err := json.Unmarshal(t.Value, &it); err != nil {
			return nil, err
		}
		v, err := FromTyped(it)
		if err != nil {
			return nil, err
		}
		for i := 0; i < t.Depth; i++ {
			if t.Container == "array" {
				v = []any{v}
			} else {
				v = map[string]any{t.Key: v}
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("unknown typed value %q", t.Type)
}
