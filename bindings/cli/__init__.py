"""The ``roost`` command-line tool: one subcommand per module in this package.

``roost submit job.sub`` runs :mod:`bindings.cli.submit`; the HTCondor-style entry
points (``condor_submit``, ``condor_status``, ...) run the same modules. Each module
defines ``main(argv: list[str]) -> int`` and reads its command line with
:mod:`bindings.cli.options`, so every command answers ``-help``/``--help`` (status 0)
and a bad command line with one line and its usage on stderr (status 2).
"""

from __future__ import annotations

import importlib
import sys

#: subcommand name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "config": ("bindings.cli.config", "print configuration values and where they were set"),
    "token": ("bindings.cli.token", "create and list identity tokens"),
    "pool": ("bindings.cli.pool", "start, inspect and stop a personal pool"),
    "status": ("bindings.cli.status", "show the pool's machines and daemons (condor_status)"),
    "run": ("bindings.cli.run", "start a personal pool if needed, run a submit file, wait for it"),
    "submit": ("bindings.cli.submit", "submit jobs from a submit description file"),
    "q": ("bindings.cli.q", "show jobs in the queue (condor_q)"),
    "rm": ("bindings.cli.rm", "remove jobs (condor_rm)"),
    "hold": ("bindings.cli.hold", "hold jobs (condor_hold)"),
    "release": ("bindings.cli.release", "release held jobs (condor_release)"),
    "qedit": ("bindings.cli.qedit", "change attributes of queued jobs (condor_qedit)"),
    "history": ("bindings.cli.history", "show jobs that left the queue (condor_history)"),
    "wait": ("bindings.cli.wait", "wait for the jobs of an event log to finish (condor_wait)"),
    "userprio": ("bindings.cli.userprio", "show and change user priorities (condor_userprio)"),
    "transfer_data": ("bindings.cli.transfer_data", "fetch the outputs of jobs submitted with -spool"),
    "drain": ("bindings.cli.drain", "stop new jobs on a machine and let it empty (condor_drain)"),
    "web": ("bindings.cli.web", "serve the pool's web site in the foreground"),
}


def _usage() -> str:
    lines = ["usage: roost COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<10} {help_}" for name, (_, help_) in sorted(COMMANDS.items())]
    return "\n".join(lines)


def _run_named(name: str, argv: list[str]) -> int:
    """Run subcommand ``name`` with ``argv`` and return its exit status (2 for an unknown one)."""
    from bindings.cli.options import CommandLine, UsageError, usage_failure

    if name not in COMMANDS:
        return usage_failure(CommandLine("roost", _usage()), UsageError(f"unknown command {name!r}"))
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(argv)


#: the public name; ``main`` calls ``_run_named`` because importing the submodule
#: ``bindings.cli.run`` (``roost run``) rebinds the package attribute ``run``
run = _run_named


def main(argv: list[str] | None = None) -> int:
    """The ``roost`` console entry point: ``roost COMMAND [ARGS...]``."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "-help", "--help", "help"):
        print(_usage())
        return 0
    return _run_named(argv[0], argv[1:])
