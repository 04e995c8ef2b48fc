-- compat_released: the released schema's version, the highest applied migration, as released
-- Awa's own `docs/migrations.md` reads it (NULL: an empty table). @S@ = the quoted schema.
SELECT (SELECT pg_catalog.max(version) FROM @S@.schema_version)::integer
