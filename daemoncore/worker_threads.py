"""Blocking work a daemon must not do on its reactor (file transfer, reading files as
another account, counting a large queue) runs in the reactor's bounded thread pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, DeferredLock
from twisted.internet.threads import deferToThread


def in_worker_thread(function: Callable, *args: Any, **kwargs: Any) -> Deferred:
    """``function(*args, **kwargs)`` in the reactor's thread pool; a Deferred of its result."""
    return deferToThread(function, *args, **kwargs)


class OneAtATime:
    """Blocking calls run through ``run_blocking`` one at a time, in the order asked.

    For background file work made of many small system calls (removing sandboxes):
    each call returns to Python and takes the GIL again, so several threads doing it
    at once kept the reactor waiting for the GIL (a startd removing 500 sandboxes at
    rm: ~460 ms of its reactor thread in take_gil, its pings up to 415 ms)."""

    def __init__(self, run_blocking: Callable[..., Deferred] = in_worker_thread) -> None:
        self._run_blocking = run_blocking
        self._turn = DeferredLock()

    def __call__(self, function: Callable, *args: Any, **kwargs: Any) -> Deferred:
        """``function(*args, **kwargs)`` once the calls asked before have ended; a Deferred of its result."""
        return self._turn.run(self._run_blocking, function, *args, **kwargs)
