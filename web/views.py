"""Each page's data (and its template values) with :mod:`web.pages`: the pool-wide pages
from the latest :class:`Snapshot`, a job's page from reads of its own through a
:class:`PoolReader` with the caller's token. Called in a worker thread, one call per request."""

from __future__ import annotations

from collections.abc import Callable

from attrs import frozen
from twisted.logger import Logger

from web import pages
from web.charts import line_chart
from web.reader import READ_ERRORS, PoolReader
from web.render import STATUS_WORDS
from web.snapshot import Snapshot
from web.store import HistoryStore
from web.timeline import logged_timeline

DAY = 24 * 3600.0

_log = Logger()


@frozen
class View:
    """A page made: its template, the values the template needs, and its JSON twin."""

    template: str
    data: dict
    extra: dict


def _problems(snapshot: Snapshot) -> dict:
    return {"problems": [snapshot.problem] if snapshot.problem else []}


def pool_view(snapshot: Snapshot, store: HistoryStore | None, now: float) -> View:
    """The pool page: slots by state, per host, and the jobs chart."""
    samples = store.jobs_since(now - DAY) if store else []
    chart = line_chart([("running", "running", [(s.time, s.running) for s in samples]),
                        ("idle", "idle", [(s.time, s.idle) for s in samples]),
                        ("held", "held", [(s.time, s.held) for s in samples])], now, DAY)
    data = {**snapshot.pool, "jobs_history": [{"time": s.time, "running": s.running, "idle": s.idle,
                                               "held": s.held} for s in samples]}
    return View("pool", data, {"chart": chart, **_problems(snapshot)})


def gpus_view(snapshot: Snapshot, _store: HistoryStore | None, _now: float) -> View:
    """The GPU page: every card and its shares."""
    return View("gpus", snapshot.gpus, _problems(snapshot))


def queue_view(snapshot: Snapshot, _store: HistoryStore | None, _now: float) -> View:
    """The queue page: counts per user and batch, and links to the first jobs."""
    return View("queue", snapshot.queue, {"jobs": snapshot.job_links, **_problems(snapshot)})


def fairshare_view(snapshot: Snapshot, store: HistoryStore | None, now: float) -> View:
    """The fair-share page: users, groups, and each group's use against its quota."""
    samples = store.groups_since(now - DAY) if store else []
    lines: list[tuple[str, str, list[tuple[float, float]]]] = []
    for group in sorted({s.group for s in samples}):
        mine = [s for s in samples if s.group == group]
        lines.append((f"{group} in use", "in-use", [(s.time, s.in_use) for s in mine]))
        lines.append((f"{group} quota", "quota", [(s.time, s.quota) for s in mine]))
    return View("fairshare", snapshot.fairshare, {"chart": line_chart(lines, now, DAY), **_problems(snapshot)})


def flocking_view(snapshot: Snapshot, _store: HistoryStore | None, _now: float) -> View:
    """The flocking page: pools flocked to and from."""
    return View("flocking", snapshot.flocking, _problems(snapshot))


class NoSuchJob(LookupError):
    """The job is in no schedd's queue or history."""


def _logged(reader: PoolReader, schedd: str, cluster: int, proc: int) -> list[dict]:
    """The job's timeline from its event log; [] (the page falls back to the ad's times)
    when its schedd cannot answer it, as a schedd from before the route cannot."""
    try:
        return logged_timeline(reader.job_events(schedd, cluster, proc))
    except READ_ERRORS as exc:  # EventLogError is a ValueError
        _log.warn("web: the events of job {job} could not be read: {why}", job=f"{cluster}.{proc}", why=str(exc))
        return []


def job_view(reader: PoolReader, cluster: int, proc: int) -> View:
    """A job's page; the ``-better-analyze`` text when it is idle.

    Raises:
        NoSuchJob: no schedd knows the job.
    """
    ad = reader.job(cluster, proc)
    if ad is None:
        raise NoSuchJob(f"job {cluster}.{proc} is in no schedd's queue or history")
    schedd = str(ad.pop("ScheddAddress", ""))
    logged = _logged(reader, schedd, cluster, proc) if schedd else []
    analysis = None
    if ad.get("JobStatus") == pages.IDLE:
        owner = ad.get("User") if isinstance(ad.get("User"), str) else None
        analysis = pages.better_analyze(ad, reader.slots(full=True), reader.last_cycle(owner))
    data = pages.job_page(ad, analysis, logged)
    return View("job", data, {"status_word": STATUS_WORDS.get(ad.get("JobStatus"), "unknown")})


PageBuilder = Callable[[Snapshot, "HistoryStore | None", float], View]

#: The pages by path.
PAGES: dict[str, PageBuilder] = {"/pool": pool_view, "/gpus": gpus_view, "/queue": queue_view,
                                 "/fairshare": fairshare_view, "/flocking": flocking_view}

