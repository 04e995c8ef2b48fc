-- fuzz_concurrency_digest: the optional helper concurrency_digest on key $1 (@S@ = the quoted
-- contract schema).
SELECT @S@.concurrency_digest($1::bytea)
