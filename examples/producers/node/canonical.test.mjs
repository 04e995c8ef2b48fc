// Checks canonical.mjs against the frozen canonical_json and unique_key vectors (node --test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Refusal, canonicalJson, fromTyped, uniqueKey } from './canonical.mjs';

const root = new URL('../../../vectors/', import.meta.url);
const load = (rel, family) => JSON.parse(readFileSync(new URL(`${rel}/${family}.json`, root), 'utf8')).vectors;

for (const rel of ['v1', 'v1.1']) {
  for (const v of load(rel, 'canonical_json')) {
    test(`canonical_json ${rel} ${v.id}`, () => {
      if (v.expected.error) {
        assert.throws(() => canonicalJson(fromTyped(v.input.value)), (e) => e instanceof Refusal && e.code === v.expected.error);
      } else {
        assert.equal(Buffer.from(canonicalJson(fromTyped(v.input.value)), 'utf8').toString('hex'), v.expected.canonical_hex);
      }
    });
  }
  for (const v of load(rel, 'unique_key')) {
    test(`unique_key ${rel} ${v.id}`, () => {
      const i = v.input;
      const run = () => uniqueKey(i.kind, i.queue, i.args === null ? null : canonicalJson(fromTyped(i.args)),
        i.period_bucket === null ? null : BigInt(i.period_bucket)).key.toString('hex');
      if (v.expected.error) assert.throws(run, (e) => e instanceof Refusal && e.code === v.expected.error);
      else assert.equal(run(), v.expected.unique_key_hex);
    });
  }
}
