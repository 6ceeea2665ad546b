"""The execution side inside the real schedd service (in memory): routes merged into
the service's table, a submitted job matched and activated at a fake startd reached
through StubTreq, reports logged in the job's event log, and condor_rm of a running
job vacating it at the startd through the service's record()."""

from __future__ import annotations

import json
import re

import pytest
from treq.testing import StubTreq

from daemoncore.security import issue_token
from daemoncore.security.accounts import current_account
from daemoncore.wire import schedd_routes, startd_routes
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator, encode_request, exchange
from daemoncore.wire.server import ApiResource, JsonReply, make_site
from schedd.service import ScheddService, ScheddSettings
from tests.support.daemon_settings import daemon_settings

KEY = b"schedd-execution-test-key-0123456789ab"
#: Who submits: this process's own account, since a root schedd writes a job's event
#: log as its owner and an owner with no account here gets none written.
OWNER = current_account().name
STARTD = "127.0.0.1:9700"
SLOT = {"Name": "slot1_1@node1", "Cpus": 1, "Memory": 1024, "Disk": 10_000_000, "Arch": "X86_64",
        "OpSys": "LINUX", "HasFileTransfer": True, "Requirements": True}


class FakeStartdRoutes:
    """The startd's routes answering as the contract says, remembering each body."""

    def __init__(self):
        self.calls = []

    def handlers(self):
        def answer(name, reply):
            def handle(request):
                self.calls.append((name, request.json()))
                return JsonReply(reply)
            return handle
        return {startd_routes.CLAIM: answer("claim", {"claim_id": "dyn-1", "slot_name": SLOT["Name"],
                                                       "slot_ad": SLOT}),
                startd_routes.ACTIVATE: answer("activate", {"started": True}),
                startd_routes.VACATE: answer("vacate", {"vacating": True}),
                startd_routes.RELEASE: answer("release", {"released": True})}

    def named(self, name):
        return [body for called, body in self.calls if called == name]


@pytest.fixture
def startd(reactor):
    routes = FakeStartdRoutes()
    resource = ApiResource(routes.handlers(), token_verifier(KEY, reactor))
    return routes, StubTreq(resource)


@pytest.fixture
def schedd(tmp_path, reactor, startd):
    settings = daemon_settings(tmp_path, "SCHEDD", "Scheduler", max_body=1 << 24)
    service = ScheddService(settings, reactor, ScheddSettings(spool=str(tmp_path / "spool"), periodic_interval=5),
                            key=KEY, http=startd[1])
    yield service
    service.queue.close()


@pytest.fixture
def call(schedd, reactor, startd):
    """Call one of the service's routes in memory; flush the fake startd's calls after."""
    site = make_site(ApiResource(schedd.handlers(), token_verifier(KEY, reactor),
                                 cooperator=clock_cooperator(reactor)), clock=reactor)

    def send(method, path, body, who=f"{OWNER}@pool", level="WRITE", headers=None):
        token = issue_token(KEY, who, [level], now=0)
        raw = encode_request(method, path, json.dumps(body).encode(), token=token, headers=headers)
        response, _ = exchange(site, raw, reactor)
        for _ in range(20):
            startd[1].flush()
            reactor.advance(0)
        return response

    return send


def test_a_submitted_job_is_claimed_activated_run_and_removed(call, schedd, startd, tmp_path):
    """Submit, negotiate, execute, then condor_rm: the startd is told to vacate and the
    job's log holds Submit, Execute and Aborted."""
    routes, _ = startd
    description = "executable = /bin/sleep\narguments = 60\nlog = job.log\nqueue 1\n"
    assert call("POST", "/v1/jobs", {"description": description, "iwd": str(tmp_path)}).status == 200
    requests = call("POST", schedd_routes.RESOURCE_REQUESTS.path(), {"submitter": f"{OWNER}@pool"},
                    "negotiator@pool", "DAEMON")
    [line] = requests.lines()
    arch = re.search(r'TARGET.Arch == "(\w+)"', line["ad"]["Requirements"]).group(1)  # this host's
    match = {"request_id": line["request_id"], "job_id": None, "slot_name": "slot1@node1",
             "startd_address": STARTD, "claim_id": "negotiated", "slot_ad": dict(SLOT, Arch=arch)}
    accepted = call("POST", schedd_routes.MATCHES.path(), {"matches": [match]}, "negotiator@pool", "DAEMON")
    assert accepted.json() == {"accepted": 1}
    assert routes.named("claim")[0]["claim_id"] == "negotiated"
    [activate] = routes.named("activate")
    path = schedd_routes.JOB_UPDATE.path(job_id="1.0")
    executed = call("POST", path, {"event": "execute", "attrs": {}}, "startd@pool", "DAEMON",
                    headers={schedd_routes.TRANSFER_KEY_HEADER: activate["transfer_key"]})
    assert executed.json() == {"job_status": 2}
    removed = call("POST", "/v1/jobs/act", {"action": "Remove", "ids": ["1.0"]})
    assert removed.json()["changed"] == 1
    assert [body["claim_id"] for body in routes.named("vacate")] == ["dyn-1"]
    assert routes.named("release") == [{"claim_id": "dyn-1"}]
    assert len(schedd.queue) == 0
    log = (tmp_path / "job.log").read_text()
    assert [line[:3] for line in log.splitlines() if line[:3].isdigit() and line[3:4] == " "] == \
        ["000", "001", "009"]
