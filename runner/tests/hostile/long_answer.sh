# Wrong adapter with long answers: every canonical_json vector gets a 200-byte wrong value.
echo '{"type":"hello","protocol":1,"implementation":{"name":"hostile","version":"0"},"capabilities":["canonical_json"]}'
while read -r line; do
    seq=$(printf '%s\n' "$line" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
    [ -n "$seq" ] && printf '{"seq":%s,"output":{"canonical_hex":"abababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababababab","canonical_text":"x"}}\n' "$seq"
done
exit 0
