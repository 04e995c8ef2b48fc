-- compat_released: the released schema's version (the highest applied migration, as
-- released Awa's own `docs/migrations.md` reads it) and the active queue-storage schema
-- (NULL: the canonical engine). @S@ = the quoted schema.
SELECT (SELECT pg_catalog.max(version) FROM @S@.schema_version)::integer,
       @S@.active_queue_storage_schema()::text
