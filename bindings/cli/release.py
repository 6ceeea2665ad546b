"""``roost release``: condor_release, by id, owner, ``-constraint`` or ``-all``, with ``-reason``."""

from __future__ import annotations

import sys

from bindings.cli.job_actions import run_action


def main(argv: list[str]) -> int:
    return run_action("release", argv)


def condor_release() -> int:
    """The ``condor_release`` console entry point."""
    return main(sys.argv[1:])
