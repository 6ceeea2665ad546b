"""The master's own route, shared by the master and ``roost pool status``."""

from __future__ import annotations

from daemoncore.wire.route import Route

# answer: {"master": {"pid", "address", "started_at", "host"}, "daemons": [{"name", "state", "pid", ...}]}
DAEMONS = Route("master_daemons", "GET", "/v1/master/daemons", level="READ")
