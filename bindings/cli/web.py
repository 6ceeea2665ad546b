"""``roost web``: run the pool's web site in the foreground (the ``WEB`` daemon, which a
personal pool also starts by itself). It serves the pool that ``roost status`` would
talk to, on ``WEB_PORT`` or ``-port``, and prints its URL; Ctrl-C stops it.

The site runs as its own process (``python -m web``), exactly as the master starts it,
so the command line and ``DAEMON_LIST`` give the same daemon."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command

USAGE = """usage: roost web [options]

  -pool HOST:PORT     the pool's collector (default: as roost status finds it)
  -port N             the port to serve on (default: WEB_PORT, else any free port)
  -log FILE           the file to log to (default: WebLog in the config's LOG directory)
"""
COMMAND = CommandLine("roost web", USAGE, [Option("-pool", 1), Option("-port", 1), Option("-log", 1)])


def web_command(reading: Reading, env: Mapping[str, str]) -> tuple[list[str], dict]:
    """The command line and environment that run the site for ``reading``.

    Raises:
        UsageError: ``-port`` is not a port number.
        NoPoolFound: no pool to serve.
    """
    from bindings.pool import find_pool

    argv = [sys.executable, "-m", "web"]
    port = reading.last("-port")
    if port is not None:
        if not port.isdigit() or int(port) > 65535:
            raise UsageError(f"-port {port!r} is not a port number (0 to 65535)")
        argv += ["--port", port]
    pool = find_pool(reading.last("-pool"))
    child = dict(env)
    child["_ROOST_COLLECTOR_HOST"] = pool.collector
    log = reading.last("-log")
    if pool.dir and os.path.exists(os.path.join(pool.dir, "config")):
        child["ROOST_CONFIG"] = os.path.join(pool.dir, "config")  # the personal pool's own keys and knobs
        # beside, not over, the files of the WEB daemon the pool's master runs
        argv += ["--address-file", os.path.join(pool.dir, "log", ".web_foreground_address")]
        log = log or os.path.join(pool.dir, "log", "WebForegroundLog")
    return argv + (["--log-file", log] if log else []), child


def _run(reading: Reading) -> int:
    from bindings.pool import NoPoolFound

    try:
        argv, env = web_command(reading, os.environ)
    except UsageError:
        raise
    except (NoPoolFound, ValueError) as exc:
        print(f"roost web: {exc}", file=sys.stderr)
        return 1
    os.execve(argv[0], argv, env)
    return 1  # not reached: execve replaces this process


def main(argv: list[str]) -> int:
    """Run ``roost web``; it returns only when it cannot start (1) or the command line is wrong (2)."""
    return run_command(COMMAND, argv, _run)
