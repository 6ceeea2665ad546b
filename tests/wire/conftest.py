"""Fixtures for wire tests: a clock and the toy API served in memory."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from daemoncore.wire.in_memory import clock_cooperator
from daemoncore.wire.server import ApiResource, make_site
from toy_api import TOY_HANDLERS, stand_in_verify


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def toy_resource(clock):
    return ApiResource(TOY_HANDLERS, stand_in_verify, cooperator=clock_cooperator(clock))


@pytest.fixture
def toy_site(toy_resource, clock):
    return make_site(toy_resource, max_body=1000, clock=clock)
