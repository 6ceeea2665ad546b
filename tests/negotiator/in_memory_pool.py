"""An in-memory pool for the negotiator's tests: a real collector (store and routes)
and a small fake schedd serving just RESOURCE_REQUESTS and MATCHES, each behind
StubTreq, plus the ads a startd and a schedd would advertise."""

from __future__ import annotations

from treq.testing import StubTreq

from collector.metrics import CollectorMetrics
from collector.routes import CollectorRoutes
from collector.store import AdStore
from daemoncore.security import issue_token
from daemoncore.wire import schedd_routes
from daemoncore.wire.adcodec import ad_from_json
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.in_memory import clock_cooperator
from daemoncore.wire.request_body import reject_unknown, take
from daemoncore.wire.server import ApiResource, JsonReply, StreamReply

KEY = b"negotiator-test-signing-key-0123456789"
COLLECTOR = "127.0.0.1:9618"

JOB = {
    "MyType": "Job", "Owner": "alice", "JobStatus": 1, "RequestCpus": 1, "RequestMemory": 512,
    "RequestDisk": 1000, "Requirements": "/Expr(TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus)/",
    "Rank": 0,
}


def job(owner: str, **extra) -> dict:
    """A job ad as a schedd sends it in a resource request."""
    return {**JOB, "Owner": owner, **extra}


def slot(name: str, cpus: int = 1, memory: int = 2048, state: str = "Unclaimed", startd: str = "127.0.0.1:9700",
         **extra) -> dict:
    """A static slot's public ad as a startd advertises it."""
    return {"MyType": "Machine", "Name": name, "Machine": name.split("@")[-1], "SlotType": "Static",
            "State": state, "Activity": "Idle", "Cpus": cpus, "Memory": memory, "Disk": 100000,
            "Start": True, "Requirements": "/Expr(START)/", "START": True, "Rank": 0,
            "StartdIpAddr": f"<{startd}>", "MyAddress": f"<{startd}>", **extra}


def submitter_ad(name: str, schedd: str, idle: int = 1) -> dict:
    """A Submitter ad as a schedd advertises it."""
    return {"MyType": "Submitter", "Name": name, "ScheddName": f"schedd@{schedd}",
            "ScheddIpAddr": f"<{schedd}>", "IdleJobs": idle, "RunningJobs": 0}


class FakeSchedd:
    """Answers RESOURCE_REQUESTS from a table and records every MATCHES body."""

    def __init__(self) -> None:
        self.requests: dict[str, list[dict]] = {}
        self.received: list[dict] = []
        self.asked: list[str] = []

    def add_requests(self, submitter: str, owner: str, count: int, request_id: str | None = None, **extra) -> None:
        ids = [f"1.{n}" for n in range(count)]
        self.requests.setdefault(submitter, []).append(
            {"request_id": request_id or f"{submitter}#1", "count": count, "ad": job(owner, **extra), "job_ids": ids})

    def handlers(self) -> dict:
        return {schedd_routes.RESOURCE_REQUESTS: self._resource_requests, schedd_routes.MATCHES: self._matches}

    def _resource_requests(self, request):
        body = request.json()
        reject_unknown(body, {"submitter"})
        name = take(body, "submitter", str)
        self.asked.append(name)
        return StreamReply(iter(self.requests.get(name, [])))

    def _matches(self, request):
        body = request.json()
        reject_unknown(body, {"matches"})
        matches = take(body, "matches", list)
        for index, match in enumerate(matches):
            reject_unknown(match, {"request_id", "job_id", "slot_name", "startd_address", "claim_id", "slot_ad"})
            ad_from_json(match["slot_ad"], f"$.matches[{index}].slot_ad")
        self.received.append(body)
        return JsonReply({"accepted": len(matches)})

    def matched(self) -> list[dict]:
        return [m for body in self.received for m in body["matches"]]


class InMemoryPool:
    """A collector and any number of fake schedds, reachable by address through StubTreq."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.store = AdStore(clock)
        self._stubs: dict[str, StubTreq] = {}
        self._add(COLLECTOR, CollectorRoutes(self.store, CollectorMetrics(self.store)).handlers())

    def _add(self, address: str, handlers: dict, key: bytes = KEY) -> None:
        resource = ApiResource(handlers, token_verifier(key, self.clock), clock_cooperator(self.clock))
        self._stubs[address] = StubTreq(resource)

    def add_schedd(self, address: str, key: bytes = KEY) -> FakeSchedd:
        """A fake schedd at ``address`` accepting tokens signed with ``key`` (another
        pool's key for a schedd of a pool flocking here)."""
        schedd = FakeSchedd()
        self._add(address, schedd.handlers(), key)
        return schedd

    def advertise(self, ad_type: str, wire: dict, private: bool = False) -> None:
        self.store.update(ad_type, ad_from_json(wire), wire, private=private)

    def add_slot(self, name: str, claim_id: str | None = None, **kwargs) -> None:
        self.advertise("Machine", slot(name, **kwargs))
        self.advertise("Machine", {"MyType": "Machine", "Name": name, "ClaimId": claim_id or f"claim-{name}"},
                       private=True)

    def connect(self, address: str, token: str | None = None) -> AsyncClient:
        """A client for ``address`` over the in-memory wire with ``token``, else this
        pool's negotiator's DAEMON token."""
        if token is None:
            token = issue_token(KEY, "negotiator@pool", ["DAEMON"], now=self.clock.seconds())
        return AsyncClient(address, token=token, http=self._stubs[address.strip("<>")], timeout=None)

    @property
    def http(self) -> "AddressRouter":
        return AddressRouter(self._stubs)

    def settle(self, rounds: int = 2000) -> None:
        """Pump every stub and run what is due on the clock until nothing moves."""
        for _ in range(rounds):
            for stub in self._stubs.values():
                stub.flush()
            self.clock.advance(0)

    def wait(self, deferred):
        """Pump until ``deferred`` fires; its result (or raise its failure)."""
        results = []
        deferred.addBoth(results.append)
        for _ in range(5000):
            if results:
                break
            for stub in self._stubs.values():
                stub.flush()
            self.clock.advance(0)
        [result] = results
        if hasattr(result, "raiseException"):
            result.raiseException()
        return result


class AddressRouter:
    """A ``treq`` stand-in that sends each request to the stub for its URL's address."""

    def __init__(self, stubs: dict[str, StubTreq]) -> None:
        self._stubs = stubs

    def request(self, method, url, **kwargs):
        address = url.split("//", 1)[1].split("/", 1)[0]
        return self._stubs[address].request(method, url, **kwargs)
