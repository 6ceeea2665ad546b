"""``Schedd``: submit, query, act on, edit and look back at jobs, with the names and
behaviour of HTCondor's ``htcondor2.Schedd``, over the schedd's routes and a
blocking client. Errors from the schedd arrive as ``RemoteError`` with its message
(400 bad input, 403 not allowed, 404 no such job, 409 wrong state)."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from bindings.collector import Collector, constraint_text
from bindings.enums import DaemonType
from bindings.pool import find_pool, pool_token
from bindings.submit import Submit
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.address import parse_address
from daemoncore.wire.blocking_client import BlockingClient
from schedd.submit.clientside import prepared_for_schedd, reads_environ
from schedd.submit.queue_args import with_queue_args

if TYPE_CHECKING:  # the event log reader loads only when events are asked for; the ClassAd
    # library when an ad is read or made (finding the schedd and submitting need neither)
    import classad
    from bindings.eventlog import JobEvent

DEFAULT_TIMEOUT = 300.0


class JobAction(enum.Enum):
    """What ``Schedd.act`` does to jobs, with htcondor2's member names."""

    Hold = "Hold"
    Release = "Release"
    Remove = "Remove"
    RemoveX = "RemoveX"
    Vacate = "Vacate"
    VacateFast = "VacateFast"
    Suspend = "Suspend"
    Continue = "Continue"


class QueryOpt(enum.IntEnum):
    """``opts`` of ``Schedd.query``; accepted for compatibility."""

    Default = 0
    AutoCluster = 1
    GroupBy = 4
    DefaultMyJobsOnly = 8
    SummaryOnly = 16
    IncludeClusterAd = 32


class SubmitResult:
    """What a submit made: a cluster id, its procs and the cluster's common ad.

    ``cluster_ad`` may be the ad as the schedd answered it (its JSON form): it is
    decoded only when :meth:`clusterad` is first called, so a script submitting in a
    loop does not pay for an ad it never reads."""

    def __init__(self, cluster: int, first_proc: int, num_procs: int,
                 cluster_ad: classad.ClassAd | Mapping[str, object]) -> None:
        self._cluster = cluster
        self._first_proc = first_proc
        self._num_procs = num_procs
        self._cluster_ad = cluster_ad

    def cluster(self) -> int:
        """The ClusterId."""
        return self._cluster

    def first_proc(self) -> int:
        """The first ProcId."""
        return self._first_proc

    def num_procs(self) -> int:
        """How many procs were submitted."""
        return self._num_procs

    def clusterad(self) -> classad.ClassAd:
        """The ad of the cluster's first job.

        Raises:
            ValueError: the schedd's answer held no valid ad.
        """
        import classad
        from daemoncore.wire.adcodec import ad_from_json

        if not isinstance(self._cluster_ad, classad.ClassAd):
            self._cluster_ad = ad_from_json(self._cluster_ad, "the cluster ad")
        return self._cluster_ad

    def clusterad_has(self, name: str) -> bool:
        """Whether the cluster ad has attribute ``name``, answered without decoding the ad."""
        if isinstance(self._cluster_ad, Mapping):
            return name.lower() in (key.lower() for key in self._cluster_ad)
        return name in self._cluster_ad

    def __str__(self) -> str:
        return f"Submitted {self._num_procs} job(s) to cluster {self._cluster}."

    def __repr__(self) -> str:
        return f"SubmitResult(cluster={self._cluster}, first_proc={self._first_proc}, num_procs={self._num_procs})"


def schedd_address(location: object, pool: str | None = None) -> str:
    """``host:port`` (with ``?tls=1`` when it serves TLS) of the schedd ``location`` names: a located ad, an address, or
    None for the pool's schedd (found through its collector).

    Raises:
        ValueError: the ad has no address, or the collector knows no schedd.
    """
    if location is None:  # the located ad as the collector sent it: its address is all that is read
        wire = Collector(pool).locate_wire(DaemonType.Schedd)
        location = {key.lower(): value for key, value in wire.items()}
        for name in ("myaddress", "scheddipaddr"):
            if isinstance(location.get(name), str):
                return str(parse_address(location[name]))
    if isinstance(location, str):
        return str(parse_address(location))
    for name in ("MyAddress", "ScheddIpAddr"):
        if name in location:
            return str(parse_address(str(location[name])))
    raise ValueError("the schedd's location ad has no MyAddress; pass Collector().locate(DaemonType.Schedd)")


class Schedd:
    """A pool's schedd: ``Schedd()`` finds it through the collector, ``Schedd(ad)`` uses a located ad."""

    def __init__(self, location: object = None, *, pool: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        found = find_pool(pool)
        self.address = schedd_address(location, pool)
        self._client = BlockingClient(self.address, token=pool_token(found), timeout=timeout)

    def __repr__(self) -> str:
        return f"Schedd({self.address!r})"

    # --- submit -------------------------------------------------------------
    def submit(self, description: Submit | str | Mapping[str, str], count: int = 0, spool: bool = False,
               itemdata: Iterable[Mapping[str, str] | str] | None = None, queue: str | None = None) -> SubmitResult:
        """Submit one cluster from ``description``; ``count``, ``itemdata`` or
        ``queue`` replace its queue statement. With ``spool`` the jobs are queued held
        (code 16) until :meth:`spool` sends their input files, as in HTCondor.

        What needs this machine (``include``, ``$ENV``, items from a file, a command
        or a glob) is expanded here, as the calling user, and the schedd gets a
        self-contained description with the items written inline.

        Raises:
            ValueError: ``itemdata`` is empty (htcondor2 raises too: no job to submit).
            SubmitError: the description is wrong (naming the file and line).
            RemoteError: the schedd refused (a bad description is a 400 naming the line).
        """
        if not isinstance(description, Submit):
            description = Submit(description) if isinstance(description, str) else Submit(dict(description))
        text = description.text()
        if itemdata is not None:
            from schedd.intake import items_queue_args

            items = [item if isinstance(item, str) else dict(item) for item in itemdata]
            if not items:
                raise ValueError("itemdata is empty, so there is no job to submit; give at least one item, "
                                 "or leave itemdata out to use the description's queue statement")
            text = with_queue_args(text, items_queue_args(items, int(count)))
        elif queue is not None:
            text = with_queue_args(text, queue)
        elif count:
            text = with_queue_args(text, str(int(count)))
        here = os.getcwd()
        sent, sizes = prepared_for_schedd(text, cwd=here, environ=os.environ)
        body = {"description": sent, "iwd": here, "file_sizes": sizes}
        if reads_environ(sent):  # the schedd reads it for getenv and use_scitokens only
            body["environ"] = dict(os.environ)
        if spool:
            body["spool"] = True
        answer = self._client.call(api.SUBMIT, body)
        return SubmitResult(answer["cluster"], answer["first_proc"], answer["num_procs"], answer["cluster_ad"])

    def spool(self, ad_list: Iterable[classad.ClassAd]) -> None:
        """Send the input files of jobs submitted with ``spool=True`` to the schedd's spool
        (each ad needs ClusterId, ProcId, Iwd and the transfer attributes); they then run
        without the submit directory."""
        from bindings.spooling import spool_jobs  # the transfer code, loaded only to spool

        spool_jobs(self._client, ad_list)

    def retrieve(self, job_spec: object) -> None:
        """Fetch the spooled outputs of the completed jobs ``job_spec`` names (``"12.0"``,
        ``"12"``, a list, or a constraint) into their submit directories."""
        from bindings.spooling import retrieve_jobs, spec_constraint

        retrieve_jobs(self._client, self.xquery(spec_constraint(job_spec)))

    # --- reading ------------------------------------------------------------
    def query(self, constraint: object = "true", projection: Iterable[str] = (),
              callback: Callable[[classad.ClassAd], object] | None = None, limit: int = -1,
              opts: QueryOpt = QueryOpt.Default) -> list:
        """The job ads for which ``constraint`` is true, cut to ``projection``; with
        ``callback``, its result for each ad (None results dropped)."""
        ads = self.xquery(constraint, projection, limit)
        if callback is None:
            return list(ads)
        return [result for result in (callback(ad) for ad in ads) if result is not None]

    def xquery(self, constraint: object = "true", projection: Iterable[str] = (), limit: int = -1) -> Iterator:
        """Like :meth:`query`, one ad at a time as the schedd streams them."""
        from daemoncore.wire.adcodec import ad_from_json

        body = {"constraint": constraint_text(constraint), "projection": list(projection), "limit": limit}
        for wire in self._client.stream(api.QUERY, body):
            yield ad_from_json(wire, "job ad from the schedd")

    def history(self, constraint: object = "true", projection: Iterable[str] = (), match: int = -1,
                since: object = None) -> Iterator:
        """Finished jobs, newest first, that match ``constraint``; at most ``match``;
        stopping at ``since`` (a job id such as ``"12.0"`` or an expression)."""
        body = {"constraint": constraint_text(constraint), "projection": list(projection), "match": match,
                "since": None if since is None else str(since)}
        from daemoncore.wire.adcodec import ad_from_json

        for wire in self._client.stream(api.HISTORY, body):
            yield ad_from_json(wire, "job ad from the schedd's history")

    def job_events(self, job_id: object) -> list[JobEvent]:
        """The events of job ``job_id`` (``"12.0"``) from its own event log as the schedd
        wrote it, oldest first (at most the last 1000); [] for a job without a log.

        Raises:
            RemoteError: the schedd refused (a malformed id is a 400).
        """
        answer = self._client.call(api.JOB_EVENTS, job_id=str(job_id))
        return [parse_logged_event(text) for text in answer["events"]]

    # --- changing jobs --------------------------------------------------------
    def act(self, action: JobAction, job_spec: object, reason: str | None = None) -> classad.ClassAd:
        """Apply ``action`` to the jobs ``job_spec`` names (``"12.0"``, ``"12"``, a
        list of those, or a constraint); a ClassAd of totals.

        Raises:
            RemoteError: the schedd refused; nothing changed.
        """
        if not isinstance(action, JobAction):
            raise TypeError(f"action must be a JobAction (e.g. JobAction.Hold), not {action!r}")
        import classad

        body = {"action": action.value, **job_spec_body(job_spec), "reason": reason}
        answer = self._client.call(api.ACT, body)
        return classad.ClassAd({"TotalSuccess": answer["changed"], "TotalBadStatus": len(answer["refused"]),
                                "TotalError": len(answer["refused"]), "TotalNotFound": 0,
                                "TotalPermissionDenied": 0})

    def edit(self, job_spec: object, attr: str, value: object) -> int:
        """Set ``attr`` to ``value`` (expression text, an ExprTree or a Python value)
        on the jobs ``job_spec`` names; how many changed.

        Raises:
            RemoteError: the schedd refused (a protected attribute is a 403); nothing changed.
        """
        body = {**job_spec_body(job_spec), "attr": attr, "value": value_text(value)}
        return self._client.call(api.EDIT, body)["changed"]


def parse_logged_event(text: str) -> JobEvent:
    """One event as the schedd answers it: a JSON line, or a text-form event with its ``...`` line."""
    from bindings.eventlog import parse_json_event, parse_text_event

    if text.lstrip().startswith("{"):
        return parse_json_event(text, "the schedd's event log answer")
    body = text.rstrip("\n")
    return parse_text_event(body[:-len("\n...")] if body.endswith("\n...") else body,
                            "the schedd's event log answer")


def job_spec_body(job_spec: object) -> dict:
    """The ``ids``/``constraint`` fields for a job spec."""
    import classad

    if isinstance(job_spec, classad.ExprTree):
        return {"constraint": str(job_spec)}
    if isinstance(job_spec, str):
        text = job_spec.strip()
        cluster, _, proc = text.partition(".")
        if cluster.isdigit() and (not proc or proc.isdigit()):
            return {"ids": [text]}
        return {"constraint": text}
    if isinstance(job_spec, int):
        return {"ids": [str(job_spec)]}
    return {"ids": [str(item).strip() for item in job_spec]}


def value_text(value: object) -> str:
    """An edit's new value as expression text (Python strings are quoted unless
    they are already an expression in ``ExprTree``)."""
    import classad

    if isinstance(value, classad.ExprTree):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    ad = classad.ClassAd()
    ad["v"] = value
    return str(ad.lookup("v"))
