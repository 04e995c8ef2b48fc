// Client-side routing from docs/contract.md §4–§8: partition choice, and the expectations
// (route source, shard, concurrency digest) this producer sends for PostgreSQL to confirm.

import { createHash } from 'node:crypto';

const MASK64 = (1n << 64n) - 1n;
const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const PARTITION_SALT = 0x9d4d1b2f53a70c91n;
const TAG = Buffer.concat([Buffer.from('awa:concurrency_key:v1', 'ascii'), Buffer.of(0)]);
export const MAX_KEY = 4096;

/** §4: multiply, then ADD the byte (neither FNV-1 nor FNV-1a), mod 2^64. */
export function hash64(key) {
  let h = OFFSET;
  for (const b of key) h = (h * PRIME + BigInt(b)) & MASK64;
  return h;
}

/** §5: the physical queue of a PartitionedQueue for a key. */
export function physicalQueue(logical, key, partitions) {
  let p = 0n;
  if (partitions !== 1) {
    let v = hash64(key) ^ PARTITION_SALT;
    v ^= v >> 30n;
    v = (v * 0xbf58476d1ce4e5b9n) & MASK64;
    v ^= v >> 27n;
    v = (v * 0x94d049bb133111ebn) & MASK64;
    v ^= v >> 31n;
    p = v % BigInt(partitions);
  }
  return p === 0n ? logical : `${logical}__p${p}`;
}

export function concurrencyDigest(key) {
  return createHash('sha256').update(TAG).update(key).digest();
}

/**
 * §8 for a queue of `width`: the `opts` expectations insert_job checks (ZA001 on a mismatch).
 * Keys are Buffers or null; the empty Buffer is a key.
 */
export function expectations(width, orderingKey, concurrencyKey) {
  // ADR-033 fallback: without a concurrency key the ordering key is the concurrency input.
  const digestKey = concurrencyKey ?? orderingKey;
  const digest = digestKey === null ? null : concurrencyDigest(digestKey);
  const out = { expected_concurrency_digest: digest === null ? null : digest.toString('hex') };
  if (orderingKey !== null) {
    out.expected_route_source = 'ordering_key';
    out.expected_enqueue_shard = Number(hash64(orderingKey) % BigInt(width));
  } else if (concurrencyKey !== null) {
    out.expected_route_source = 'concurrency_key';
    out.expected_enqueue_shard = Number(digest.readBigUInt64BE(0) % BigInt(width));
  } else {
    out.expected_route_source = 'rotor'; // the rotor's shard is PostgreSQL's choice: never expect one
  }
  return out;
}
