"""`python -m awa_conformance`: the same command as the `awa-conformance` console script."""

from awa_conformance._cli import main

main()
