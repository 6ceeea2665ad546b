"""``roost hold``: condor_hold, by id, owner, ``-constraint`` or ``-all``, with ``-reason``."""

from __future__ import annotations

import sys

from bindings.cli.job_actions import run_action


def main(argv: list[str]) -> int:
    return run_action("hold", argv)


def condor_hold() -> int:
    """The ``condor_hold`` console entry point."""
    return main(sys.argv[1:])
