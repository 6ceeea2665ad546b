"""A daemon logs each request it answers only when its <SUBSYS>_DEBUG asks for it."""

import pytest
from twisted.web import server
from twisted.web.resource import Resource

from daemoncore.config import Config
from daemoncore.daemon import DaemonSettings, logs_commands
from daemoncore.wire.server import make_site


@pytest.mark.parametrize("debug, logs", [
    ("", False), ("D_SECURITY", False), ("D_COMMAND", True), ("d_security, d_command:2", True),
    ("D_FULLDEBUG", True), ("D_ALL", True), ("D_COMMANDS", False),
])
def test_request_lines_follow_the_debug_categories(debug, logs):
    assert logs_commands(debug) is logs


def test_the_schedd_debug_knob_reaches_the_schedd_only():
    config = Config.from_text("SCHEDD_DEBUG = D_COMMAND\n")
    assert DaemonSettings.from_config(config, "SCHEDD", "Scheduler").log_requests
    assert not DaemonSettings.from_config(config, "COLLECTOR", "Collector").log_requests


@pytest.mark.parametrize("enabled", [False, True])
def test_a_site_writes_access_lines_only_when_asked(monkeypatch, enabled):
    written = []
    monkeypatch.setattr(server.Site, "log", lambda site, request: written.append(request))
    make_site(Resource(), log_requests=enabled).log("a request")
    assert written == (["a request"] if enabled else [])
