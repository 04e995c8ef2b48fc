# Hostile adapter: declares every family (far more requests than a pipe holds), then never
# reads its stdin, so the runner's writer blocks on a full pipe.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["canonical_json","unique_key","ordering_shard","partition","concurrency_digest","concurrency_shard","routing_precedence","move_shard","unique_states"]}'
sleep "${1:-3600}"
