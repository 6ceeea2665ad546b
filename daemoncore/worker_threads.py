"""Blocking work a daemon must not do on its reactor (file transfer, reading files as
another account, counting a large queue) runs in the reactor's bounded thread pool."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread


def in_worker_thread(function: Callable, *args: Any, **kwargs: Any) -> Deferred:
    """``function(*args, **kwargs)`` in the reactor's thread pool; a Deferred of its result."""
    return deferToThread(function, *args, **kwargs)
