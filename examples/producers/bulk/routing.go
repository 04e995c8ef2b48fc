// Client-side routing from docs/contract.md §4–§8: partition choice, and the staged routing
// (concurrency digest, shard, route source) publish_batch checks (§14).
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgtype"
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

// routing is what a staging row carries for §14: the values publish_batch recomputes.
type routing struct {
	digest []byte // nil for a rotor job (no key)
	shard  *int16 // nil for a rotor job: only PostgreSQL knows the rotor's pick
	source string // ordering_key, concurrency_key or rotor
}

// stagedRouting is §8 at width w: the ordering key routes, else the concurrency key, else the
// rotor; the digest is over the concurrency key, or the ordering key when there is none (§6).
func stagedRouting(w int, orderingKey, concurrencyKey []byte) routing {
	digestKey := concurrencyKey
	if digestKey == nil {
		digestKey = orderingKey
	}
	var r routing
	if digestKey != nil {
		r.digest = concurrencyDigest(digestKey)
	}
	var shard uint64
	switch {
	case orderingKey != nil:
		r.source = "ordering_key"
		shard = hash64(orderingKey) % uint64(w)
	case concurrencyKey != nil:
		r.source = "concurrency_key"
		shard = binary.BigEndian.Uint64(r.digest[:8]) % uint64(w)
	default:
		r.source = "rotor"
		return r
	}
	if mutant == "off_by_one_shard" {
		shard++ // the mutant: a client shard one past the contract's
	}
	s := int16(shard)
	r.shard = &s
	return r
}

// varbit is a '0'/'1' string as a bit string of exactly that length (leftmost bit first).
func varbit(bits string) (pgtype.Bits, error) {
	b := pgtype.Bits{Bytes: make([]byte, (len(bits)+7)/8), Len: int32(len(bits)), Valid: true}
	for i, c := range bits {
		switch c {
		case '1':
			b.Bytes[i/8] |= 0x80 >> (i % 8)
		case '0':
		default:
			return b, fmt.Errorf("unique_states %q is not a string of 0 and 1", bits)
		}
	}
	return b, nil
}
