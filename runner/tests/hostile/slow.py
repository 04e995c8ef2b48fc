"""Hostile-but-correct adapter filter: passes another adapter's stdout through, pausing.

Sleeps before the hello and after every 300 lines, each pause shorter than the runner's
--adapter-timeout, so a slow adapter that keeps talking must pass.
"""
import sys
import time

PAUSE = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
time.sleep(PAUSE)
for n, line in enumerate(sys.stdin, 1):
    sys.stdout.write(line)
    sys.stdout.flush()
    if n % 300 == 0:
        time.sleep(PAUSE)
