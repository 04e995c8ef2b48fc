// Client-side routing from docs/contract.md §4–§8: partition choice, and the expectations
// (route source, shard, concurrency digest) this producer sends for PostgreSQL to confirm.
package main

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

// expectations is §8 for a queue of width w: the opts keys insert_job checks (ZA001 on a
// mismatch). A nil key is absent; a non-nil empty slice is the empty key.
func expectations(w int, orderingKey, concurrencyKey []byte) map[string]any {
	digestKey := concurrencyKey
	if digestKey == nil && mutant != "no_concurrency_fallback" {
		digestKey = orderingKey // ADR-033 fallback: the ordering key is the concurrency input
	}
	out := map[string]any{"expected_concurrency_digest": nil}
	var digest []byte
	if digestKey != nil {
		digest = concurrencyDigest(digestKey)
		out["expected_concurrency_digest"] = hex.EncodeToString(digest)
	}
	switch {
	case orderingKey != nil:
		out["expected_route_source"] = "ordering_key"
		out["expected_enqueue_shard"] = hash64(orderingKey) % uint64(w)
	case concurrencyKey != nil:
		out["expected_route_source"] = "concurrency_key"
		out["expected_enqueue_shard"] = binary.BigEndian.Uint64(digest[:8]) % uint64(w)
	default:
		out["expected_route_source"] = "rotor" // the rotor's shard is PostgreSQL's choice
	}
	return out
}
