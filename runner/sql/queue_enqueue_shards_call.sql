-- queue_enqueue_shards_call: the width of queue $1 (NULL = 'default') as producers read it
-- (@S@ = the quoted contract schema).
SELECT @S@.queue_enqueue_shards($1::text)
