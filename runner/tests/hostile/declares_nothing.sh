# Empty adapter: declares no family at all, then exits cleanly on stop.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":[]}'
cat >/dev/null
