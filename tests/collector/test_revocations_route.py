"""A host that joined the pool holds no revocation file: its daemons fetch the pool's
from the collector (REVOCATIONS) and refuse what it names, like the central manager's."""

from __future__ import annotations

import pytest
from treq.testing import StubTreq
from twisted.internet.defer import succeed
from twisted.internet.task import Clock

from collector.revocations import RevocationRoutes
from daemoncore.daemon import DaemonService
from daemoncore.security import issue_token, write_token
from daemoncore.security.revocation import read_revocation_file
from daemoncore.security.signing_key import create_signing_key, public_key_pem, write_public_key
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator
from daemoncore.wire.server import ApiResource
from tests.support.daemon_settings import daemon_settings

RULE = 'jti == "abc"\n'


@pytest.fixture
def pool_key(tmp_path):
    return create_signing_key(str(tmp_path / "cm" / "POOL"))


def collector_stub(pool_key, clock, path):
    """The collector's revocation route in memory, reading ``path`` synchronously."""
    routes = RevocationRoutes(path, clock, read=lambda where: succeed(read_revocation_file(where)))
    resource = ApiResource(routes.handlers(), token_verifier(pool_key, clock), clock_cooperator(clock))
    return StubTreq(resource)


def joined_daemon(tmp_path, pool_key, http, clock):
    """A startd on a host that joined: the public key and its own token, no signing key."""
    public = str(tmp_path / "exec" / "POOL.pub")
    write_public_key(public, public_key_pem(pool_key))
    write_token(str(tmp_path / "exec" / "daemon"), issue_token(pool_key, "startd@exec1", ["DAEMON"], issuer="pool"))
    settings = daemon_settings(str(tmp_path), "STARTD", "Machine", collector_host="198.18.0.2:9618",
                               signing_key_file=str(tmp_path / "exec" / "POOL"), public_key_file=public,
                               daemon_token_file=str(tmp_path / "exec" / "daemon"))
    daemon = DaemonService(settings, clock, http=http)
    assert daemon.key is None  # it can check tokens, not make them
    return daemon


def fetched(http, deferred):
    http.flush()
    results = []
    deferred.addBoth(results.append)
    return results[0]


def test_a_joined_host_reads_the_pools_revocations_from_the_collector(tmp_path, pool_key):
    """The revocation file's text comes back through the collector, sent with the host's token."""
    clock = Clock()
    (tmp_path / "revoked").write_text(RULE)
    http = collector_stub(pool_key, clock, str(tmp_path / "revoked"))
    source = joined_daemon(tmp_path, pool_key, http, clock).revocation_source()
    assert fetched(http, source("ignored")) == RULE


def test_no_revocation_file_is_no_revocations(tmp_path, pool_key):
    """A pool that never revoked a token answers null, which the watcher reads as none."""
    clock = Clock()
    http = collector_stub(pool_key, clock, str(tmp_path / "never-written"))
    source = joined_daemon(tmp_path, pool_key, http, clock).revocation_source()
    assert fetched(http, source("ignored")) is None


def test_a_daemon_holding_the_signing_key_reads_the_file_itself(tmp_path, pool_key):
    """The central manager's daemons (and a personal pool's) keep reading the local file."""
    settings = daemon_settings(str(tmp_path), "STARTD", "Machine", collector_host="127.0.0.1:9618",
                               signing_key_file=str(tmp_path / "cm" / "POOL"))
    assert DaemonService(settings, Clock()).revocation_source() is None
