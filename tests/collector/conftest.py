"""Fixtures for collector tests: a clock, a store, and the collector's routes served
in memory with real tokens of each level."""

from __future__ import annotations

import json

import pytest
from twisted.internet.task import Clock

from collector.metrics import CollectorMetrics
from collector.routes import CollectorRoutes
from collector.store import AdStore
from daemoncore.security import issue_token
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.metrics import metrics_routes
from daemoncore.wire.server import ApiResource, make_site

KEY = b"collector-test-signing-key-0123456789"
READ = issue_token(KEY, "alice@pool", ["READ"], now=0)
DAEMON = issue_token(KEY, "startd@pool", ["DAEMON"], now=0)


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(clock):
    return AdStore(clock, default_lifetime=900)


@pytest.fixture
def call(store, clock):
    """POST a JSON body to the collector in memory; returns the parsed response."""
    metrics = CollectorMetrics(store)
    table = {**CollectorRoutes(store, metrics).handlers(), **metrics_routes(metrics.registry)}
    site = make_site(ApiResource(table, token_verifier(KEY, clock), cooperator=clock_cooperator(clock)), clock=clock)

    def post(path, body=None, token="DAEMON", method="POST"):
        token = {"READ": READ, "DAEMON": DAEMON}.get(token, token)
        payload = b"" if body is None else json.dumps(body).encode()
        response, _ = exchange(site, encode_request(method, path, payload, token=token), clock)
        return response

    return post
