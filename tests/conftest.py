"""Test-wide settings: the ClassAd conformance cases assume UTC as local time, and
every test that needs a process or a server is marked ``integration``, so that
``pytest -m "not integration"`` runs the unit tests alone (a unit test that starts a
process or binds a port fails, saying so)."""

import os
import pathlib
import socket
import subprocess
import time

import pytest

os.environ["TZ"] = "UTC"
time.tzset()

INTEGRATION_DIR = pathlib.Path(__file__).with_name("integration")

#: Fixtures that start a process or a server (a moto S3 process, an HTTP server on
#: loopback, ``useradd`` for a real local account): a test that asks for one, even
#: through another fixture, is an integration test.
PROCESS_FIXTURES = frozenset({"s3_endpoint", "http_root", "owner"})


def pytest_collection_modifyitems(config, items):
    """Mark the tests of tests/integration and those that use a process fixture."""
    for item in items:
        if INTEGRATION_DIR in item.path.parents or PROCESS_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process(request, monkeypatch):
    """In a test not marked integration, starting a process, forking or binding a
    socket raises, naming the test and the marker it lacks."""
    if request.node.get_closest_marker("integration"):
        return

    def refuse(*args, **kwargs):
        raise RuntimeError(f"{request.node.nodeid} starts a process or binds a port: "
                           "mark it @pytest.mark.integration")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(socket.socket, "bind", refuse)
    monkeypatch.setattr(os, "fork", refuse)
