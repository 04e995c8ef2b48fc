"""Hostile adapter: declares every family and answers every vector wrongly, with values holding
every kind of character a report must survive.

Each answer echoes the vector's input (so the vector's own values, such as the U+FFFF in
unique_key args, reach the failure messages) next to a string of C0 controls and NUL, DEL and
C1, U+FFFE/U+FFFF, RTL marks, astral characters and markup; the first answer also carries a
1 MB value. With argument `lone-surrogate` the first answer instead holds a JSON `\\udc00`
escape without its pair, which no JSON parser accepts as a string.
"""
import json
import sys

FAMILIES = [
    "canonical_json", "unique_key", "ordering_shard", "partition", "concurrency_digest",
    "concurrency_shard", "routing_precedence", "move_shard", "unique_states", "errors",
]
HOSTILE = (
    "".join(chr(c) for c in range(0x20)) + "\x7f\x80\x9b\x9f\ufffe\uffff\ufdd0\ufffd"
    + "\u200f\u202e\u200e\ufeff\U00010000\U0001f600\U0010ffff<a b=\"&amp;\">]]>\x1b[31mred"
)


def main() -> None:
    lone = sys.argv[1:] == ["lone-surrogate"]
    # `nested`: it is sent every vector, the compact nested form included (ADR 0053).
    hello = {"type": "hello", "protocol": 1,
             "implementation": {"name": "hostile\uffff\x01", "version": "0\u202e"},
             "capabilities": FAMILIES + ["nested"]}
    print(json.dumps(hello), flush=True)
    first = True
    for line in sys.stdin:
        msg = json.loads(line)
        if msg.get("type") != "request":
            continue
        output = {"hostile": HOSTILE, "echo": msg.get("input")}
        if first:
            output["big"] = HOSTILE + "x" * 1_000_000 + HOSTILE
        text = json.dumps({"seq": msg["seq"], "output": output})
        if first and lone:
            text = text.replace('"hostile": "', '"hostile": "\\udc00', 1)
        first = False
        print(text, flush=True)


main()
