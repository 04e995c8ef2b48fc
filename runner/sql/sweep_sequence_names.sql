-- sweep_sequence_names: the sequences (seq_name) that rows of table @S@.@T@ whose queue starts with
-- one of the run-scoped prefixes $1 name; the sweep drops them once the rows are gone.
SELECT seq_name FROM @S@.@T@
WHERE seq_name IS NOT NULL
  AND EXISTS (SELECT FROM pg_catalog.unnest($1::text[]) AS s(p)
              WHERE pg_catalog.left(queue, pg_catalog.length(s.p)) = s.p)
