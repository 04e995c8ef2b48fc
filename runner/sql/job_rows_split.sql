-- job_rows_split: the job rows of table @S@.@T@ of a producer case run beside others (ADR
-- 0057), counted two ways in one read: its own (queue starting with the case's prefix $1, or a
-- job id in $4, the ids the case was answered, written by the login $2) and the strays (written
-- by the run's login $2 into a queue outside every run-scoped queue, whose names start with
-- $3, and answered to this case under no id in $4). @L@ is the login column (NULL::text when
-- the table records none), @ID@ the job id column.
SELECT pg_catalog.count(*) FILTER (
         WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1
            OR (@L@ = $2::text AND @ID@ = ANY ($4::bigint[])))::bigint,
       pg_catalog.count(*) FILTER (
         WHERE @L@ = $2::text
           AND pg_catalog.left(queue, pg_catalog.length($3)) <> $3
           AND NOT (@ID@ = ANY ($4::bigint[])))::bigint
FROM @S@.@T@
WHERE pg_catalog.left(queue, pg_catalog.length($1)) = $1 OR @L@ = $2::text
