# Hostile adapter: a valid hello, then one 100 MB line.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["move_shard"]}'
head -c 100000000 /dev/zero | tr '\0' 'x'
echo
cat >/dev/null
