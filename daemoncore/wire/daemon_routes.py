"""Routes every daemon serves: its Prometheus metrics and a liveness answer."""

from __future__ import annotations

from daemoncore.wire.route import Route

METRICS = Route("metrics", "GET", "/metrics", level="READ")
PING = Route("ping", "GET", "/v1/ping", level=None)
