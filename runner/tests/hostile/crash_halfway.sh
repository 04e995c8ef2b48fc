# Hostile adapter: answers two requests, then crashes with requests outstanding.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["concurrency_digest"]}'
read -r _one
echo '{"seq":1,"skipped":true,"reason":"hostile"}'
read -r _two
echo '{"seq":2,"skipped":true,"reason":"hostile"}'
exit 3
