// Families implements the contract v1 algorithms (docs/contract.md §3–§9) and their vector input/output shapes.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
)

// familyFunc decodes one vector's input and returns the output object (the ADR 0002 expected shape).
type familyFunc func(input json.RawMessage) (interface{}, error)

var families = map[string]familyFunc{
	"ordering_shard":     fOrderingShard,
	"partition":          fPartition,
	"concurrency_digest": fConcurrencyDigest,
	"concurrency_shard":  fConcurrencyShard,
	"routing_precedence": fRoutingPrecedence,
	"move_shard":         fMoveShard,
	"unique_states":      fUniqueStates,
}

func capabilities() []string {
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names) // map order is random; keep hello deterministic
	return names
}

// ---- contract algorithms ----

const (
	maxWidth      = 64    // §4, §7: width in 1..=64
	maxPartitions = 32767 // §5: n in 1..=32767
	maxKeyLen     = 4096  // §8: longer keys are rejected (ZA003)
	fnvOffset     = 0xcbf29ce484222325
	fnvPrime      = 0x100000001b3
	partitionSalt = 0x9d4d1b2f53a70c91
)

// concurrencyTag is "awa:concurrency_key:v1" || 0x00 (§6).
var concurrencyTag = append([]byte("awa:concurrency_key:v1"), 0x00)

// jobStates is Awa's job-state enum order (§3).
var jobStates = [8]string{"scheduled", "available", "running", "completed", "retryable", "failed", "cancelled", "waiting_external"}

// hash64 is §4: multiply, then add the byte (neither FNV-1 nor FNV-1a). Go's uint64 wraps mod 2^64.
func hash64(key []byte) uint64 {
	h := uint64(fnvOffset)
	for _, b := range key {
		h = h*fnvPrime + uint64(b)
	}
	return h
}

// partitionHash64 is §5: SplitMix64-style finaliser over hash64(key) XOR a salt.
func partitionHash64(key []byte) uint64 {
	v := hash64(key) ^ partitionSalt
	v ^= v >> 30
	v *= 0xbf58476d1ce4e5b9
	v ^= v >> 27
	v *= 0x94d049bb133111eb
	v ^= v >> 31
	return v
}

func concurrencyDigest(key []byte) [32]byte {
	h := sha256.New()
	h.Write(concurrencyTag)
	h.Write(key)
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// concurrencyShard is §7: BE64(digest[0..8]) mod width.
func concurrencyShard(d [32]byte, width uint64) uint64 {
	return binary.BigEndian.Uint64(d[:8]) % width
}

func shardsAllWidths(v uint64) []int {
	s := make([]int, maxWidth)
	for i := range s {
		s[i] = int(v % uint64(i+1))
	}
	return s
}

// ---- output shapes (ADR 0002 "expected") ----

type shardsOut struct {
	Shards []int `json:"shards"`
}

type partitionOut struct {
	Partition     int    `json:"partition"`
	PhysicalQueue string `json:"physical_queue"`
}

type digestOut struct {
	DigestHex string `json:"digest_hex"`
}

type routingOut struct {
	RouteSource          string  `json:"route_source"`
	EnqueueShard         *int    `json:"enqueue_shard"` // null = rotor
	ConcurrencyDigestHex *string `json:"concurrency_digest_hex"`
}

type moveOut struct {
	Shard int `json:"shard"`
}

type statesOut struct {
	Bits   string   `json:"bits"`
	States []string `json:"states"`
}

// ---- families ----

func fOrderingShard(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "key_hex")
	if err != nil {
		return nil, err
	}
	key, err := in.hex("key_hex", false)
	if err != nil {
		return nil, err
	}
	return shardsOut{Shards: shardsAllWidths(hash64(key))}, nil
}

func fPartition(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "key_hex", "logical_queue", "partitions")
	if err != nil {
		return nil, err
	}
	key, err := in.hex("key_hex", false)
	if err != nil {
		return nil, err
	}
	logical, err := in.str("logical_queue")
	if err != nil {
		return nil, err
	}
	n, err := in.integer("partitions", 1, maxPartitions)
	if err != nil {
		return nil, err
	}
	p := uint64(0)
	if n != 1 {
		p = partitionHash64(key) % uint64(n)
	}
	queue := logical
	if p != 0 {
		queue = logical + "__p" + strconv.FormatUint(p, 10)
	}
	return partitionOut{Partition: int(p), PhysicalQueue: queue}, nil
}

func fConcurrencyDigest(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "key_hex")
	if err != nil {
		return nil, err
	}
	key, err := in.hex("key_hex", false)
	if err != nil {
		return nil, err
	}
	d := concurrencyDigest(key)
	return digestOut{DigestHex: hex.EncodeToString(d[:])}, nil
}

func fConcurrencyShard(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "key_hex")
	if err != nil {
		return nil, err
	}
	key, err := in.hex("key_hex", false)
	if err != nil {
		return nil, err
	}
	d := concurrencyDigest(key)
	return shardsOut{Shards: shardsAllWidths(binary.BigEndian.Uint64(d[:8]))}, nil
}

func fRoutingPrecedence(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "width", "ordering_key_hex", "concurrency_key_hex")
	if err != nil {
		return nil, err
	}
	w, err := in.integer("width", 1, maxWidth)
	if err != nil {
		return nil, err
	}
	ok, err := in.hex("ordering_key_hex", true) // nil = absent; empty non-nil = the empty key
	if err != nil {
		return nil, err
	}
	ck, err := in.hex("concurrency_key_hex", true)
	if err != nil {
		return nil, err
	}
	for name, k := range map[string][]byte{"ordering_key_hex": ok, "concurrency_key_hex": ck} {
		if len(k) > maxKeyLen {
			return nil, fmt.Errorf("%s is %d bytes; keys longer than %d bytes are rejected (ZA003)", name, len(k), maxKeyLen)
		}
	}
	out := routingOut{}
	digestHex := func(k []byte) *string {
		d := concurrencyDigest(k)
		s := hex.EncodeToString(d[:])
		return &s
	}
	switch {
	case ok != nil:
		s := int(hash64(ok) % uint64(w))
		out.RouteSource, out.EnqueueShard = "ordering_key", &s
		if ck != nil {
			out.ConcurrencyDigestHex = digestHex(ck)
		} else {
			out.ConcurrencyDigestHex = digestHex(ok) // ADR-033 fallback
		}
	case ck != nil:
		d := concurrencyDigest(ck)
		s := int(concurrencyShard(d, uint64(w)))
		out.RouteSource, out.EnqueueShard = "concurrency_key", &s
		out.ConcurrencyDigestHex = digestHex(ck)
	default:
		// Rotor: the shard is the implementation's choice; this adapter answers null.
		out.RouteSource = "rotor"
	}
	return out, nil
}

func fMoveShard(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "retained_shard", "destination_width")
	if err != nil {
		return nil, err
	}
	r, err := in.integer("retained_shard", 0, maxWidth-1)
	if err != nil {
		return nil, err
	}
	w, err := in.integer("destination_width", 1, maxWidth)
	if err != nil {
		return nil, err
	}
	return moveOut{Shard: int(r % w)}, nil
}

func fUniqueStates(raw json.RawMessage) (interface{}, error) {
	in, err := fields(raw, "mask")
	if err != nil {
		return nil, err
	}
	m, err := in.integer("mask", 0, 255)
	if err != nil {
		return nil, err
	}
	bits := make([]byte, 8)
	states := []string{} // serialise an empty mask as [], never null
	for i := 0; i < 8; i++ {
		bits[i] = '0'
		if m&(1<<uint(i)) != 0 {
			bits[i] = '1' // character i from the left is bit i
			states = append(states, jobStates[i])
		}
	}
	return statesOut{Bits: string(bits), States: states}, nil
}

// ---- strict input decoding ----

type inputFields map[string]json.RawMessage

// fields decodes input as an object holding exactly the named keys: a vector format change
// should fail loudly, not be half-understood.
func fields(raw json.RawMessage, names ...string) (inputFields, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("request has no input object")
	}
	var m inputFields
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("input must be a JSON object: %v", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if _, ok := m[n]; !ok {
			return nil, fmt.Errorf("input lacks field %q", n)
		}
	}
	for k := range m {
		if !want[k] {
			return nil, fmt.Errorf("input has unknown field %q", k)
		}
	}
	return m, nil
}

func isNull(r json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(r), []byte("null")) }

// hex decodes a lowercase hex field; with nullable, JSON null returns (nil, nil) and the empty
// string returns a non-nil empty slice (the empty key is a key).
func (m inputFields) hex(name string, nullable bool) ([]byte, error) {
	r := m[name]
	if nullable && isNull(r) {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(r, &s); err != nil {
		return nil, fmt.Errorf("%s must be a hex string: %v", name, err)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return nil, fmt.Errorf("%s must be lowercase hex; byte %d is %q", name, i, c)
		}
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

func (m inputFields) str(name string) (string, error) {
	var s string
	if err := json.Unmarshal(m[name], &s); err != nil || isNull(m[name]) {
		return "", fmt.Errorf("%s must be a string", name)
	}
	return s, nil
}

// integer decodes a JSON integer in [lo, hi]; floats, strings and null are rejected.
func (m inputFields) integer(name string, lo, hi int64) (int64, error) {
	var v int64
	if isNull(m[name]) {
		return 0, fmt.Errorf("%s must be an integer, not null", name)
	}
	if err := json.Unmarshal(m[name], &v); err != nil {
		return 0, fmt.Errorf("%s must be an integer: %v", name, err)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("%s = %d is outside %d..=%d", name, v, lo, hi)
	}
	return v, nil
}
