"""Hostile adapter for the Markdown and terminal outputs: its hello name and version, and the
error it answers to every request, hold what would become structure if shown raw in Markdown
(a newline and a `# heading`, an `<img onerror>`, a `javascript:` link and autolink, an
@-mention, a URL) or would rewrite a terminal (a bidi override, ESC sequences, a carriage
return). Every case fails (an `error` answer is a finding), so every message reaches
`--markdown`, JUnit, the terminal and the reports `report diff` / `report compatibility` read.
It also writes the same text to its stderr.
"""
import json
import sys

FAMILIES = [
    "canonical_json", "unique_key", "ordering_shard", "partition", "concurrency_digest",
    "concurrency_shard", "routing_precedence", "move_shard", "unique_states", "errors",
]
PAYLOAD = (
    "\n# heading\n<img src=x onerror=alert(1)> [x](javascript:alert(1)) <javascript:alert(2)> "
    "@someone https://evil.example \u202eevil\u202c \x1b]0;title\x07\x1b[2J\rover"
)
ERROR = "line one" + PAYLOAD + "\n```\n# after a fence\n@someone again"


def main() -> None:
    hello = {"type": "hello", "protocol": 1,
             "implementation": {"name": "hostile" + PAYLOAD, "version": "1.0" + PAYLOAD},
             "capabilities": FAMILIES + ["nested"]}
    print(json.dumps(hello), flush=True)
    sys.stderr.write("stderr of the adapter:" + PAYLOAD + "\n")
    sys.stderr.flush()
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") != "request":
            continue
        print(json.dumps({"seq": msg["seq"], "error": ERROR}), flush=True)


main()
