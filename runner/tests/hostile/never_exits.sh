# Hostile adapter: declares nothing, then ignores stop, EOF and SIGTERM and runs forever.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":[]}'
trap '' TERM INT HUP
cat >/dev/null
while :; do sleep "${1:-1}"; done
