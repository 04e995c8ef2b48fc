-- fuzz_preflight: what `awa-conformance fuzz` needs in schema $1 (unquoted name): insert_job
-- with the v1 signature, job_routing, whether the optional routing helpers
-- (concurrency_digest, concurrency_shard, ordering_shard) are all there, and whether
-- job_stored (revision 1.2) is, so that generated payloads are judged whole; and the server's
-- version number, refused below the oldest supported major as a run refuses it; and the
-- database's encoding (UTF8 only, as for a run: ADR 0060).
SELECT pg_catalog.to_regprocedure(pg_catalog.format(
           '%I.insert_job(text, text, jsonb, smallint, smallint, timestamptz, jsonb, text[], '
           'bytea, bit varying, bytea, bytea, jsonb)', $1::text)) IS NOT NULL,
       pg_catalog.to_regprocedure(pg_catalog.format('%I.job_routing(bigint)', $1::text)) IS NOT NULL,
       pg_catalog.to_regprocedure(pg_catalog.format('%I.concurrency_digest(bytea)', $1::text)) IS NOT NULL
       AND pg_catalog.to_regprocedure(pg_catalog.format('%I.concurrency_shard(bytea, integer)', $1::text)) IS NOT NULL
       AND pg_catalog.to_regprocedure(pg_catalog.format('%I.ordering_shard(bytea, integer)', $1::text)) IS NOT NULL,
       pg_catalog.to_regprocedure(pg_catalog.format('%I.job_stored(bigint)', $1::text)) IS NOT NULL,
       pg_catalog.current_setting('server_version_num')::integer,
       pg_catalog.getdatabaseencoding()::text
