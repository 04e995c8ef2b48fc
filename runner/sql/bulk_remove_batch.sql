-- bulk_remove_batch: delete the staged rows of batch $1 (a UUID as text) that a wrong
-- implementation let commit, so the run leaves the database as it found it (@S@ = the
-- quoted contract schema).
DELETE FROM @S@.bulk_staging AS b WHERE b.batch_id = $1::text::uuid
