-- 001_schema_and_catalog: the contract schema and its catalog (contract_version, capabilities).
--
-- Depends on: nothing (first file). Placeholders: @schema@ (see schema/README.md, substitution
-- rule).
-- Idempotent: CREATE SCHEMA IF NOT EXISTS and CREATE OR REPLACE FUNCTION; re-running is a
-- no-op and keeps existing privileges. Safe inside one transaction.

CREATE SCHEMA IF NOT EXISTS @schema@;

-- The contract's major version these objects implement (docs/adr/0001-contract-v1-decisions.md).
-- A producer checks it before relying on any v1 behaviour; v2 will return 2. Revisions that
-- move no vector byte (v1.1) keep 1 and add a capability (ADR 0025).
CREATE OR REPLACE FUNCTION @schema@.contract_version()
RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$ SELECT 1 $fn$;

-- The optional features this install supports, sorted. Names match the vector families plus
-- the contract surfaces (expectations = opts expected_* keys, job_routing = the read function),
-- so a runner can skip families an install lacks instead of failing them. contract_1_1 says
-- the install implements revision 1.1 (docs/contract.md section 13); the runner requires it.
CREATE OR REPLACE FUNCTION @schema@.contract_capabilities()
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $fn$
  SELECT ARRAY[
    'concurrency_digest',
    'concurrency_shard',
    'contract_1_1',
    'expectations',
    'job_routing',
    'move_shard',
    'ordering_shard',
    'routing_precedence',
    'unique_key',
    'unique_states'
  ]::text[]
$fn$;
