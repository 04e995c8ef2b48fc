-- compat_storage: the active queue-storage schema of released Awa 0.6.x (NULL: the canonical
-- engine). Asked only when compat_detect found the locator function, which releases before
-- 0.6.0 lack. @S@ = the quoted schema.
SELECT @S@.active_queue_storage_schema()::text
