"""A daemon's listening socket queues LISTEN_BACKLOG connections, as the kernel reports it."""

import shutil
import subprocess

import pytest
from twisted.web import resource, server

from daemoncore.prompt_reactor import PromptEPollReactor
from daemoncore.wire.tls_port import LISTEN_BACKLOG, listen


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("ss") is None, reason="needs iproute2's ss to read the socket's backlog")
def test_the_listening_socket_has_the_large_backlog():
    """``ss`` shows a listening socket's backlog in its Send-Q column (capped by somaxconn)."""
    reactor = PromptEPollReactor()
    port = listen(reactor, 0, server.Site(resource.Resource(), reactor=reactor), "127.0.0.1")  # its timers stay off the global reactor
    try:
        shown = subprocess.run(["ss", "-ltnH", f"sport = :{port.getHost().port}"], capture_output=True,
                               text=True, check=True).stdout.split()
        with open("/proc/sys/net/core/somaxconn") as handle:
            cap = int(handle.read())
        assert shown[0] == "LISTEN" and int(shown[2]) == min(LISTEN_BACKLOG, cap) > 50
    finally:
        port.stopListening()
        reactor._poller.close()
