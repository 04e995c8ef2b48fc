// Client-side routing from docs/contract.md §4–§8: partition choice, and the route source,
// shard and concurrency digest a producer computes for PostgreSQL to confirm.
package awa

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

const (
	maxKey        = 4096 // §8: longer keys are refused (ZA003); a client router refuses them too
	fnvOffset     = 0xcbf29ce484222325
	fnvPrime      = 0x100000001b3
	partitionSalt = 0x9d4d1b2f53a70c91
)

// concurrencyTag is "awa:concurrency_key:v1" || 0x00 (§6).
var concurrencyTag = append([]byte("awa:concurrency_key:v1"), 0x00)

// hash64 is §4: multiply, then ADD the byte (neither FNV-1 nor FNV-1a); uint64 wraps mod 2^64.
func hash64(key []byte) uint64 {
	h := uint64(fnvOffset)
	for _, b := range key {
		h = h*fnvPrime + uint64(b)
	}
	return h
}

// physicalQueue is §5: the queue of a PartitionedQueue(logical, n) that a key routes to.
func physicalQueue(logical string, key []byte, partitions int) string {
	if partitions == 1 {
		return logical
	}
	v := hash64(key) ^ partitionSalt
	v ^= v >> 30
	v *= 0xbf58476d1ce4e5b9
	v ^= v >> 27
	v *= 0x94d049bb133111eb
	v ^= v >> 31
	p := v % uint64(partitions)
	if p == 0 {
		return logical
	}
	return logical + "__p" + strconv.FormatUint(p, 10)
}

func concurrencyDigest(key []byte) []byte {
	h := sha256.New()
	h.Write(concurrencyTag)
	h.Write(key)
	return h.Sum(nil)
}

// Routing is §8 for one job at a queue's width: the route source, the shard and the
// concurrency digest. insert_job confirms them as expectations (ZA001 on a mismatch), and
// publish_batch recomputes them from a staging row (§14).
type Routing struct {
	Digest []byte // nil when the job has neither key
	Shard  *int16 // nil for a rotor job: only PostgreSQL knows the rotor's pick
	Source string // ordering_key, concurrency_key or rotor
}

// Route is §8 at width w: the ordering key routes, else the concurrency key, else the rotor;
// the digest is over the concurrency key, or the ordering key when there is none (§6). A nil
// key is absent; a non-nil empty slice is the empty key.
func Route(w int, orderingKey, concurrencyKey []byte) Routing {
	digestKey := concurrencyKey
	if digestKey == nil {
		digestKey = orderingKey // ADR-033 fallback: the ordering key is the concurrency input
	}
	var r Routing
	if digestKey != nil {
		r.Digest = concurrencyDigest(digestKey)
	}
	var shard uint64
	switch {
	case orderingKey != nil:
		r.Source = "ordering_key"
		shard = hash64(orderingKey) % uint64(w)
	case concurrencyKey != nil:
		r.Source = "concurrency_key"
		shard = binary.BigEndian.Uint64(r.Digest[:8]) % uint64(w)
	default:
		r.Source = "rotor"
		return r
	}
	s := int16(shard) // below the width, a smallint
	r.Shard = &s
	return r
}

// Expectations are the opts keys of r that insert_job checks: no digest is a JSON null, and a
// rotor job names no shard.
func (r Routing) Expectations() map[string]any {
	out := map[string]any{"expected_route_source": r.Source, "expected_concurrency_digest": nil}
	if r.Digest != nil {
		out["expected_concurrency_digest"] = hex.EncodeToString(r.Digest)
	}
	if r.Shard != nil {
		out["expected_enqueue_shard"] = *r.Shard
	}
	return out
}
