# Dishonest adapter: declares a family, then skips every vector of it.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["canonical_json"]}'
while read -r line; do
    seq=$(printf '%s\n' "$line" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
    [ -n "$seq" ] && printf '{"seq":%s,"skipped":true,"reason":"not implemented"}\n' "$seq"
done
exit 0
