"""``roost rm``: condor_rm, by id, owner, ``-constraint`` or ``-all``, with ``-reason``."""

from __future__ import annotations

import sys

from bindings.cli.job_actions import run_action


def main(argv: list[str]) -> int:
    return run_action("rm", argv)


def condor_rm() -> int:
    """The ``condor_rm`` console entry point."""
    return main(sys.argv[1:])
