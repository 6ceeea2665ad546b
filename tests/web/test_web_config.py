"""The WEB daemon's knobs: a bad one stops it naming the knob, before it listens."""

from __future__ import annotations

import pytest
from twisted.internet import task

from daemoncore.config import Config, ConfigError
from daemoncore.security import create_signing_key
from tests.support.daemon_settings import daemon_settings
from web.service import build_web


def build(tmp_path, text, **changes):
    key = tmp_path / "POOL"
    if not key.exists():
        create_signing_key(str(key))
    settings = daemon_settings(tmp_path, "WEB", "Web", collector_host="127.0.0.1:9618", signing_key_file=str(key),
                               **changes)
    return build_web(settings, task.Clock(), Config.from_text(f"LOG = {tmp_path}\nSPOOL = {tmp_path}/spool\n" + text))


def test_the_history_goes_in_the_spool_directory_made_when_missing(tmp_path):
    build(tmp_path, "")
    assert (tmp_path / "spool" / "web_history.sqlite").exists()


def test_the_loopback_rule_defaults_to_the_pools_interface(tmp_path):
    assert build(tmp_path, "").site_settings.loopback_allowed is True
    assert build(tmp_path, "", interface="198.18.0.1").site_settings.loopback_allowed is False
    assert build(tmp_path, "WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN = false\n").site_settings.loopback_allowed is False


@pytest.mark.parametrize("text, named", [("WEB_SAMPLE_INTERVAL = 0\n", "WEB_SAMPLE_INTERVAL"),
                                         ("WEB_SNAPSHOT_INTERVAL = -1\n", "WEB_SNAPSHOT_INTERVAL"),
                                         ("WEB_MAX_JOBS = 0\n", "WEB_MAX_JOBS")])
def test_a_bad_knob_is_named(tmp_path, text, named):
    with pytest.raises(ConfigError, match=named):
        build(tmp_path, text)


def test_a_history_file_that_is_not_a_database_is_named(tmp_path):
    (tmp_path / "history").write_text("not a database, " * 100)
    with pytest.raises(ConfigError, match="WEB_HISTORY_FILE"):
        build(tmp_path, f"WEB_HISTORY_FILE = {tmp_path / 'history'}\n")
    with pytest.raises(ConfigError, match="WEB_HISTORY_FILE"):
        build(tmp_path, f"WEB_HISTORY_FILE = {tmp_path / 'history' / 'under-a-file'}\n")


def test_the_site_needs_a_collector(tmp_path):
    settings = daemon_settings(tmp_path, "WEB", "Web")
    with pytest.raises(ConfigError, match="COLLECTOR_HOST"):
        build_web(settings, task.Clock(), Config.from_text(""))
