"""Fixtures for collector tests: a clock, a store, and the collector's routes served
in memory with tokens of each level."""

from __future__ import annotations

import json

import pytest
from attrs import frozen
from twisted.internet.task import Clock

from collector.metrics import CollectorMetrics
from collector.routes import CollectorRoutes
from collector.store import AdStore
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.route import AUTHORIZATION_LEVELS
from daemoncore.wire.server import ApiResource, make_site


@frozen
class StandInIdentity:
    """An identity with one level, until daemoncore.security's tokens land."""

    subject: str
    level: str

    def allows(self, level) -> bool:
        return AUTHORIZATION_LEVELS.index(self.level) >= AUTHORIZATION_LEVELS.index(getattr(level, "name", level))


def stand_in_verify(token: str) -> StandInIdentity:
    """Tokens look like ``subject:LEVEL``."""
    subject, _, level = token.partition(":")
    if level not in AUTHORIZATION_LEVELS:
        raise ValueError("signature does not match")
    return StandInIdentity(subject, level)


READ = "alice@pool:READ"
DAEMON = "startd@pool:DAEMON"


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(clock):
    return AdStore(clock, default_lifetime=900)


@pytest.fixture
def call(store, clock):
    """POST a JSON body to the collector in memory; returns the parsed response."""
    routes = CollectorRoutes(store, CollectorMetrics(store))
    site = make_site(
        ApiResource(routes.handlers(), stand_in_verify, cooperator=clock_cooperator(clock)), clock=clock
    )

    def post(path, body=None, token=DAEMON, method="POST"):
        payload = b"" if body is None else json.dumps(body).encode()
        response, _ = exchange(site, encode_request(method, path, payload, token=token), clock)
        return response

    return post
