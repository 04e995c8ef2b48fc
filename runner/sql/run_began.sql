-- run_began: the run's start watermark, read once when the run opens the database: the first
-- transaction id (xid8, as bigint) not yet assigned then. A row version whose xmin is at or
-- after it was written during the run (sweep_login_ids.sql, sweep_login_rows.sql).
SELECT pg_catalog.pg_snapshot_xmax(pg_catalog.pg_current_snapshot())::text::bigint
