"""The ``/metrics`` route: a registry's metrics in Prometheus text format."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from daemoncore.wire.server import ApiRequest, BytesReply


def metrics_handler(registry: CollectorRegistry):
    """A handler answering with the current values of ``registry``."""

    def serve_metrics(_request: ApiRequest) -> BytesReply:
        return BytesReply(generate_latest(registry), CONTENT_TYPE_LATEST.encode("ascii"))

    return serve_metrics
