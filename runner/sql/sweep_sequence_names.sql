-- sweep_sequence_names: the sequences (seq_name) that rows of table @S@.@T@ whose queue starts with
-- $1 (run-scoped) name; the sweep drops them once the rows are gone.
SELECT seq_name FROM @S@.@T@ WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1 AND seq_name IS NOT NULL
