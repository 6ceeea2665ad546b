"""Blocking reads of the pool for one page, over the daemons' own REST routes with the
bindings' wire client and the caller's token: slots and daemon ads from the collector,
jobs from each schedd, priorities and the last cycle from the negotiator. Every query
carries a limit, so no page asks for more than the site can show. Runs in worker
threads, never on the reactor."""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

from daemoncore.wire import collector_routes, daemon_routes, negotiator_routes, schedd_routes
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError, Unreachable

#: Attributes the pool and GPU pages read of each slot.
SLOT_ATTRS = ("Name", "Machine", "State", "Activity", "SlotType", "PartitionableSlot", "DynamicSlot", "Cpus",
              "Memory", "GPUs", "TotalSlotGPUs", "TotalCpus", "TotalMemory", "JobId", "GlobalJobId", "RemoteOwner",
              "AvailableGPUs", "AssignedGPUs", "AssignedGPUMemoryMb", "AssignedGPUCores", "GPUsDetails", "GPUCards",
              "RemoteUser", "RemoteScheddName")
#: Attributes the queue page reads of each job.
QUEUE_ATTRS = ("ClusterId", "ProcId", "Owner", "JobStatus", "JobBatchName", "AccountingGroup", "RemotePool")
#: Schedds asked at most.
MAX_SCHEDDS = 50
#: Seconds a daemon's /metrics may take (only the GPU page's colours wait on it).
METRICS_TIMEOUT = 2.0


@frozen
class Limits:
    """How much one page reads at most (``WEB_MAX_SLOTS``, ``WEB_MAX_JOBS``)."""

    slots: int = 20_000
    jobs: int = 200_000


class PoolReader:
    """The pool's daemons as one caller (token) sees them."""

    def __init__(self, collector: str, token: str | None, limits: Limits = Limits(), timeout: float = 30.0) -> None:
        self._collector = BlockingClient(collector, token=token, timeout=timeout)
        self._token = token
        self._timeout = timeout
        self.limits = limits

    def ads(self, ad_type: str, projection: Iterable[str] = (), constraint: str = "true",
            limit: int | None = None) -> list[dict]:
        """Ads of ``ad_type`` from the collector in JSON form."""
        body = {"constraint": constraint, "projection": list(projection), "limit": limit or self.limits.slots}
        return list(self._collector.stream(collector_routes.QUERY, body, ad_type=ad_type))

    def slots(self, full: bool = False) -> list[dict]:
        """The slot ads (only the attributes the pages show, unless ``full``)."""
        return self.ads("Machine", () if full else SLOT_ATTRS)

    def schedds(self) -> list[dict]:
        """The Scheduler ads."""
        return self.ads("Scheduler", (), limit=MAX_SCHEDDS)

    def _schedd(self, ad: dict) -> BlockingClient:
        address = str(ad.get("MyAddress", "")).strip().strip("<>")
        return BlockingClient(address, token=self._token, timeout=self._timeout)

    def jobs(self, constraint: str = "true", projection: Iterable[str] = QUEUE_ATTRS,
             limit: int | None = None) -> list[dict]:
        """Jobs of every schedd (each marked with ``ScheddName``) for which ``constraint`` holds."""
        found: list[dict] = []
        for ad in self.schedds():
            room = (limit or self.limits.jobs) - len(found)
            if room <= 0:
                break
            body = {"constraint": constraint, "projection": list(projection), "limit": room}
            name = str(ad.get("Name", ""))
            found.extend({**job, "ScheddName": name} for job in self._schedd(ad).stream(schedd_routes.QUERY, body))
        return found

    def job(self, cluster: int, proc: int) -> dict | None:
        """The whole ad of job ``cluster.proc``, from the queue, else from the history;
        ``MyAddress`` of its schedd in ``ScheddAddress``."""
        constraint = f"ClusterId == {int(cluster)} && ProcId == {int(proc)}"
        for ad in self.schedds():
            client = self._schedd(ad)
            for wire in client.stream(schedd_routes.QUERY, {"constraint": constraint, "projection": [], "limit": 1}):
                return {**wire, "ScheddAddress": ad.get("MyAddress", "")}
            body = {"constraint": constraint, "projection": [], "match": 1, "since": None}
            for wire in client.stream(schedd_routes.HISTORY, body):
                return {**wire, "ScheddAddress": ad.get("MyAddress", "")}
        return None

    def job_events(self, schedd_address: str, cluster: int, proc: int) -> list:
        """Job ``cluster.proc``'s events from its event log, as its schedd reads them
        (``bindings.JobEvent`` values, oldest first; [] without a log)."""
        from bindings.schedd import parse_logged_event

        client = self._schedd({"MyAddress": schedd_address})
        answer = client.call(schedd_routes.JOB_EVENTS, job_id=f"{int(cluster)}.{int(proc)}")
        return [parse_logged_event(text) for text in answer.get("events") or ()]

    def metrics(self, address: str) -> str:
        """The Prometheus text a daemon at ``address`` exports on ``/metrics``."""
        client = BlockingClient(address, token=self._token, timeout=min(self._timeout, METRICS_TIMEOUT))
        data = client.call(daemon_routes.METRICS)
        return data.decode("utf-8", "replace") if isinstance(data, bytes) else ""

    def _negotiator(self) -> BlockingClient | None:
        found = self.ads("Negotiator", ("MyAddress",), limit=1)
        address = str(found[0].get("MyAddress", "")).strip().strip("<>") if found else ""
        return BlockingClient(address, token=self._token, timeout=self._timeout) if address else None

    def priorities(self) -> list[dict]:
        """The negotiator's priority rows ([] without a negotiator)."""
        negotiator = self._negotiator()
        answer = negotiator.call(negotiator_routes.PRIORITIES) if negotiator else None
        return list(answer.get("priorities") or []) if isinstance(answer, dict) else []

    def last_cycle(self, submitter: str | None = None) -> dict:
        """The negotiator's last cycle ({} without a negotiator)."""
        negotiator = self._negotiator()
        query = {"submitter": submitter} if submitter else None
        answer = negotiator.call(negotiator_routes.LAST_CYCLE, query=query) if negotiator else None
        return answer if isinstance(answer, dict) else {}


#: What a read can fail with; a page says so instead of failing.
READ_ERRORS = (RemoteError, Unreachable, ValueError, OSError)
