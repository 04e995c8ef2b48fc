"""The `awa-conformance` console script: the Rust runner compiled into this wheel, in-process."""

from __future__ import annotations

import os
import signal
import sys

from awa_conformance import _native


def main() -> None:
    """Run the runner on ``sys.argv`` and exit with its documented exit code."""
    # Python's SIGINT handler only sets a flag that native code never checks while the run
    # holds the thread: restore the default so Ctrl-C acts as on the standalone binary
    # (the runner installs its own handlers where it cleans up).
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # The runner writes straight to file descriptors 1 and 2: nothing buffered may follow it.
    sys.stdout.flush()
    sys.stderr.flush()
    # Arguments as the binary sees them: the OS bytes, invalid UTF-8 replaced (to_string_lossy).
    argv = ["awa-conformance"] + [
        os.fsencode(a).decode("utf-8", "replace") for a in sys.argv[1:]
    ]
    raise SystemExit(_native._run_cli(argv))


if __name__ == "__main__":
    main()
