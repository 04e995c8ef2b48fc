-- bulk_publish: publish the staged batch $1 (a UUID as text) through publish_batch, which
-- returns the new job ids in row order (@S@ = the quoted contract schema; docs/contract.md section 14).
SELECT @S@.publish_batch($1::text::uuid)
