"""The ``/metrics`` route: a registry's metrics in Prometheus text format, at the READ
level, or open to anyone when ``METRICS_REQUIRE_AUTHENTICATION = false``."""

from __future__ import annotations

import attrs
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from daemoncore.wire.daemon_routes import METRICS
from daemoncore.wire.route import Route
from daemoncore.wire.server import ApiRequest, BytesReply

#: The knob that opens ``/metrics`` to scrapers without a token (default true: READ needed).
REQUIRE_AUTHENTICATION_KNOB = "METRICS_REQUIRE_AUTHENTICATION"


def metrics_handler(registry: CollectorRegistry):
    """A handler answering with the current values of ``registry``."""

    def serve_metrics(_request: ApiRequest) -> BytesReply:
        return BytesReply(generate_latest(registry), CONTENT_TYPE_LATEST.encode("ascii"))

    return serve_metrics


def metrics_route(require_authentication: bool = True) -> Route:
    """``GET /metrics`` at the READ level, or with no level when authentication is not required."""
    return METRICS if require_authentication else attrs.evolve(METRICS, level=None)


def metrics_routes(registry: CollectorRegistry, require_authentication: bool = True) -> dict:
    """The route table entry serving ``registry`` on ``/metrics``."""
    return {metrics_route(require_authentication): metrics_handler(registry)}
