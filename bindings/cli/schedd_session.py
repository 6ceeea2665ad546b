"""What every command that talks to a daemon shares: finding the schedd (the pool's,
or one by ``-name``), knowing whose token it speaks with, and turning each failure into
one line a person can act on."""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable

from bindings.cli.options import UsageError
from bindings.pool import NoPoolFound, find_pool, pool_token


def current_user(pool: str | None = None) -> str:
    """The user the pool's token names (else the login name)."""
    from daemoncore.security import read_unverified

    try:
        token = pool_token(find_pool(pool))
        if token:
            return read_unverified(token).user
    except Exception:  # no token or an unreadable one: fall back to the login name
        pass
    return getpass.getuser()


def located_schedd(pool: str | None, name: str | None):
    """The pool's schedd, or the one the collector knows as ``name`` (``-name``).

    Raises:
        ValueError: the collector knows no schedd of that name.
    """
    from bindings.schedd import Schedd

    if name is None:
        return Schedd(pool=pool)
    from bindings.collector import Collector
    from bindings.enums import DaemonType

    return Schedd(Collector(pool).locate(DaemonType.Schedd, name), pool=pool)


def run_reporting(prog: str, work: Callable[[], int], daemon: str = "schedd",
                  unreachable_hint: str = "is the pool up? `roost pool status` tells",
                  forbidden_hint: str = "") -> int:
    """Run ``work``; any failure becomes ``prog: <why>`` on stderr and status 1. A
    :class:`UsageError` passes through, for :func:`bindings.cli.options.run_command` to
    report with the usage (status 2). ``daemon`` names who refused; the hints say what to do."""
    from daemoncore.config import ConfigError
    from daemoncore.security import SecurityError
    from daemoncore.wire.errors import RemoteError, Unreachable

    try:
        return work()
    except (UsageError, BrokenPipeError):  # run_command reports both
        raise
    except NoPoolFound as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
    except Unreachable as exc:
        print(f"{prog}: {exc} ({unreachable_hint})", file=sys.stderr)
    except RemoteError as exc:
        hints = {401: " (no valid token for this pool: run `roost pool up`, or set ROOST_TOKEN)"}
        if forbidden_hint:
            hints[403] = f" ({forbidden_hint})"
        print(f"{prog}: the {daemon} refused: {exc.message}{hints.get(exc.status, '')}", file=sys.stderr)
    except (ConfigError, SecurityError, ValueError, OSError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
    return 1
