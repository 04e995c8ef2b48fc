-- lifecycle_move_shard: one move_shard($1 retained shard, $2 destination width) call
-- (@S@ = the quoted contract schema).
SELECT @S@.move_shard($1::integer, $2::integer)
