// Awa canonical JSON v1 (docs/contract.md §1) over JavaScript values, and the BLAKE3 unique_key (§2).
//
// Written from the contract alone, never calling the kit. JavaScript has one number type, so
// this follows the contract's int-or-float rule (§13): an integral `number` within
// ±(2^53-1) is an integer, every other finite `number` a float, `bigint` is an integer
// (range-checked), and `new Float(x)` marks an integral float such as 1.0 explicitly.

import { blake3 } from '@noble/hashes/blake3.js';

export const MAX_DEPTH = 128; // a value inside 128 containers is accepted, 129 refused
const I64_MIN = -(2n ** 63n);
const U64_MAX = 2n ** 64n - 1n;
const UTF8 = new TextEncoder();

/** A client-side refusal: the contract refuses the input, nothing is enqueued. */
export class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

/** Explicit float marker: `new Float(1)` is written `1.0`, a plain `1` is the integer `1`. */
export class Float {
  constructor(value) {
    this.value = value;
  }
}

/** Compares two object keys by their UTF-8 bytes (the contract's order), not UTF-16 units. */
function compareKeys(a, b) {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

const ESCAPES = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function writeString(s) {
  // TextEncoder would silently turn a lone surrogate into U+FFFD: refuse it instead (ADR 0028).
  if (!s.isWellFormed()) throw new Refusal('lone_surrogate', 'a string holds a lone UTF-16 surrogate');
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ESCAPES[ch] !== undefined) out += ESCAPES[ch];
    else if (c < 0x20) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

/** Shortest round-trip digits of a finite float laid out by the contract's table. */
function writeFloat(v) {
  if (!Number.isFinite(v)) return 'null'; // NaN and the infinities have no JSON form
  const sign = v < 0 || Object.is(v, -0) ? '-' : '';
  let digits;
  let k;
  if (v === 0) {
    digits = '0';
    k = 1;
  } else {
    // toExponential() without an argument gives the shortest digits that round-trip (nearest,
    // ties to even), as "d.ddde±x"; then |v| = 0.d1d2... x 10^(x+1).
    const [mant, exp] = Math.abs(v).toExponential().split('e');
    digits = mant.replace('.', '');
    k = Number(exp) + 1;
  }
  const n = digits.length;
  let body;
  if (k - n >= 0 && k <= 16) body = digits + '0'.repeat(k - n) + '.0';
  else if (k > 0 && k <= 16) body = digits.slice(0, k) + '.' + digits.slice(k);
  else if (k > -5 && k <= 0) body = '0.' + '0'.repeat(-k) + digits;
  else {
    const x = k - 1;
    body = digits[0] + (n > 1 ? '.' + digits.slice(1) : '') + 'e' + (x >= 0 ? '+' : '-') + Math.abs(x);
  }
  return sign + body;
}

function writeInteger(i) {
  if (i < I64_MIN || i > U64_MAX) throw new Refusal('integer_out_of_range', `integer ${i} is outside [-2^63, 2^64-1]`);
  return i.toString();
}

function write(v, depth) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'bigint') return writeInteger(v);
  if (typeof v === 'number') return Number.isSafeInteger(v) && !Object.is(v, -0) ? String(v) : writeFloat(v);
  if (v instanceof Float) return writeFloat(v.value);
  if (typeof v === 'string') return writeString(v);
  if (depth >= MAX_DEPTH) throw new Refusal('too_deep', `args nest deeper than ${MAX_DEPTH} arrays/objects`);
  if (Array.isArray(v)) return '[' + v.map((x) => write(x, depth + 1)).join(',') + ']';
  // Objects: a Map (it can hold any key, "__proto__" included) or a plain object. A Map built
  // by set() already keeps the last value of a repeated key.
  const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
  entries.sort((a, b) => compareKeys(a[0], b[0]));
  return '{' + entries.map(([key, x]) => writeString(key) + ':' + write(x, depth + 1)).join(',') + '}';
}

/** The canonical JSON text of a value (encode it with TextEncoder for the bytes). */
export function canonicalJson(value) {
  return write(value, 0);
}

function le64(bucket) {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(bucket); // little-endian, whatever the machine's order
  return b;
}

/**
 * The unique_key pre-image and key (§2): kind, then 0x00 and each present field; the key is
 * the first 16 bytes of BLAKE3. `args` is canonical JSON text or null (by_args off).
 */
export function uniqueKey(kind, queue, argsCanonical, periodBucket) {
  const parts = [UTF8.encode(kind)];
  if (queue !== null) parts.push(Uint8Array.of(0), UTF8.encode(queue));
  if (argsCanonical !== null) parts.push(Uint8Array.of(0), UTF8.encode(argsCanonical));
  if (periodBucket !== null) parts.push(Uint8Array.of(0), le64(periodBucket));
  const preimage = Buffer.concat(parts);
  return { preimage, key: Buffer.from(blake3(preimage)).subarray(0, 16) };
}

/** Decodes an ADR 0002 typed value (what the runner sends as `args`) into JavaScript values. */
export function fromTyped(t) {
  switch (t.type) {
    case 'null':
      return null;
    case 'bool':
      return t.value;
    case 'int':
      return BigInt(t.value);
    case 'float': {
      const f = Buffer.from(t.bits, 'hex').readDoubleBE(0);
      // An integral float (1.0, -0.0) needs the marker, or it would be written as an integer.
      return Number.isSafeInteger(f) || Object.is(f, -0) ? new Float(f) : f;
    }
    case 'string':
      return t.value;
    case 'array':
      return t.value.map(fromTyped);
    case 'object':
      return new Map(t.value.map(([k, x]) => [k, fromTyped(x)]));
    case 'nested': {
      // The compact form of a deep chain: `depth` one-element arrays (or one-member objects).
      let inner = fromTyped(t.value);
      for (let i = 0; i < t.depth; i++) inner = t.container === 'array' ? [inner] : new Map([[t.key, inner]]);
      return inner;
    }
    default:
      throw new Error(`unknown typed value ${JSON.stringify(t.type)}`);
  }
}
