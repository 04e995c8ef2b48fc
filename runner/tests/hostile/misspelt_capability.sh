# Adapter with a misspelt family name in its hello.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["move_shard","routing"]}'
cat >/dev/null
