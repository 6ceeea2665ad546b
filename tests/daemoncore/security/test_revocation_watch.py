"""Tests for daemoncore.security.revocation_watch, and the token verifier that consults it."""

import pytest
from twisted.internet.defer import fail, succeed
from twisted.internet.task import Clock

from daemoncore.security import issue_token
from daemoncore.security.errors import TokenRevokedError
from daemoncore.security.revocation import RevocationError, add_revocation, read_revocation_file
from daemoncore.security.revocation_watch import RevocationHolder, RevocationWatcher
from daemoncore.wire.auth import token_verifier

KEY = b"revocation-watch-test-key-0123456789abcd"


def watcher(tmp_path, holder, clock, interval=10.0):
    path = str(tmp_path / "revoked_tokens")
    return path, RevocationWatcher(holder, clock, interval, path,
                                   read=lambda where: succeed(read_revocation_file(where)))


def test_a_revoked_token_is_refused_after_the_next_reread(tmp_path):
    """A token accepted before its revocation is refused once the watcher has re-read the file, within one interval."""
    clock, holder = Clock(), RevocationHolder()
    path, watch = watcher(tmp_path, holder, clock)
    verify = token_verifier(KEY, clock, revocations=holder)
    token = issue_token(KEY, "startd@hostB", ["DAEMON"], issuer="pool", now=0)
    watch.startService()
    assert verify(token).name == "startd@hostB"
    add_revocation(path, 'sub == "startd@hostB"')
    clock.advance(9.9)
    assert verify(token).name == "startd@hostB"
    clock.advance(0.1)
    with pytest.raises(TokenRevokedError, match='revoked by \'sub == "startd@hostB"\''):
        verify(token)
    other = issue_token(KEY, "startd@hostC", ["DAEMON"], issuer="pool", now=0)
    assert verify(other).name == "startd@hostC"
    watch.stopService()
    assert clock.getDelayedCalls() == []


def test_a_bad_file_keeps_the_rules_in_force(tmp_path):
    """A file that no longer parses leaves the last good rules in force."""
    clock, holder = Clock(), RevocationHolder()
    path, watch = watcher(tmp_path, holder, clock)
    add_revocation(path, 'jti == "abc"')
    watch.startService()
    good = holder.current
    with open(path, "a", encoding="utf-8") as out:
        out.write("jti == ==\n")
    clock.advance(10)
    assert holder.current == good and holder.version == 1
    watch.stopService()


def test_a_failed_read_is_logged_and_the_loop_goes_on(tmp_path):
    """An unreadable file (the read fails) changes nothing and the next tick reads again."""
    clock, holder = Clock(), RevocationHolder()
    reads = []

    def read(where):
        reads.append(where)
        return fail(RevocationError("cannot read"))

    watch = RevocationWatcher(holder, clock, 5.0, "somewhere", read=read)
    watch.startService()
    clock.advance(5)
    assert len(reads) == 2 and holder.version == 0
    watch.stopService()
