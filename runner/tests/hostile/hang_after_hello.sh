# Hostile adapter: says hello, then hangs in a child process (sh forks, it does not exec);
# $1 is a unique sleep length so the test can find a leftover child.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["move_shard"]}'
sleep "${1:-3600}"
echo never reached
