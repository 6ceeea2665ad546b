"""Fixtures for wire tests: a clock and the toy API served in memory."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator
from daemoncore.wire.server import ApiResource, make_site
from tests.wire.toy_api import KEY, TOY_HANDLERS


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def toy_resource(clock):
    return ApiResource(TOY_HANDLERS, token_verifier(KEY, clock), cooperator=clock_cooperator(clock))


@pytest.fixture
def toy_site(toy_resource, clock):
    return make_site(toy_resource, max_body=1000, clock=clock)
