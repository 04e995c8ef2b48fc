# Hostile adapter: answers a seq the runner never sent.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["move_shard"]}'
read -r _request
echo '{"seq":987654321,"output":{}}'
cat >/dev/null
