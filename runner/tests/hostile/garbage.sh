# Hostile adapter: a valid hello, then a line that is not JSON.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["move_shard"]}'
echo 'this is not JSON'
cat >/dev/null
