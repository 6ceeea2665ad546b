"""``roost q -analyze`` and ``roost q -better-analyze`` (condor_q's analysis): for
each chosen job, which clauses of its Requirements the pool's slots meet, and how
many slots could run it. ``roost q`` reads the command line (the jobs are chosen as
it chooses them; its display options make no difference) and hands the request here.

With ``-better-analyze`` a GPU job's request is also judged card by card
(:mod:`bindings.gpu_analysis`). With ``-better-analyze`` and a schedd that flocks (``FLOCK_TO``), each flock pool's
slots are counted too. With ``-better-analyze`` an idle job's report ends with one sentence
saying what it waits for, from the negotiator's last cycle (:mod:`bindings.wait_reason`). Only this host's daemons hold the other pools' CAs and tokens
(the collector's ``GET /v1/trust`` is DAEMON level), so a flock pool is asked with
them when the caller can read the host's daemon token (as root), and otherwise the
report says plainly that the pool could not be asked and why."""

from __future__ import annotations

import sys

from bindings.analyze import PoolCount, analyze_job, count_pool, render_analysis, render_pool_counts
from bindings.cli.q import QueueRequest
from bindings.cli.schedd_session import current_user, located_schedd
from bindings.gpu_analysis import analyze_gpus, render_gpu_analysis
from bindings.wait_reason import CycleView, submitter_of, view_from_answer, waiting_sentence

#: Why a flock pool cannot be asked when this host's daemon token cannot be read.
NO_DAEMON_TOKEN = ("only this host's daemons hold that pool's CA and token (GET /v1/trust is DAEMON level); "
                   "run this as a user who can read {knob} ({path}), or ask with roost status -pool")


def run(request: QueueRequest) -> int:
    """Print the analysis of the jobs ``request`` chooses; 0."""
    from bindings.collector import Collector
    from bindings.enums import AdType

    pool = request.pool
    jobs = located_schedd(pool, request.name).query(request.constraint(current_user(pool)))
    if not jobs:
        print("No jobs match; nothing to analyze.")
        return 0
    home = Collector(pool)
    slots = home.query(AdType.Startd)
    better = request.analysis == "better"
    flocked = FlockPools(home, request.name) if better else None
    last_cycle = LastCycle(pool) if better else None
    for job in sorted(jobs, key=lambda ad: (ad.get("ClusterId", 0), ad.get("ProcId", 0))):
        analysis = analyze_job(job, slots)
        sys.stdout.write(render_analysis(analysis, better=better))
        gpus = analyze_gpus(job, slots, analysis.job_id) if better and analysis.status == 1 else None
        if gpus is not None:
            sys.stdout.write("\n" + render_gpu_analysis(gpus))
        if flocked is not None and analysis.status == 1:
            sys.stdout.write(render_pool_counts(analysis, home.address, flocked.counts(job)))
        if last_cycle is not None and analysis.status == 1:
            failing = [clause.text for clause in analysis.failing]
            sys.stdout.write("\n" + waiting_sentence(analysis, last_cycle.view(job, analysis.job_id), failing) + "\n")
    return 0


class LastCycle:
    """The negotiator's last cycle, asked once for every job (and again per job when the
    answer was cut at its bound), or why the negotiator could not be asked."""

    def __init__(self, pool: str | None) -> None:
        self._pool = pool
        self._negotiator = None
        self._answer: dict | None = None
        self._problem: str | None = None

    def view(self, job, job_id: str) -> CycleView:
        """What the last cycle says of ``job``."""
        from daemoncore.wire.errors import RemoteError, Unreachable

        try:
            if self._answer is None and self._problem is None:
                from bindings.negotiator import Negotiator

                self._negotiator = Negotiator(self._pool)
                self._answer = self._negotiator.last_cycle()
            if self._problem is not None:
                return CycleView(problem=self._problem)
            answer = self._answer
            if answer.get("truncated") and submitter_of(job) is not None:
                answer = self._negotiator.last_cycle(submitter=submitter_of(job))
        except (RemoteError, Unreachable, ValueError) as exc:
            self._problem = str(exc)
            return CycleView(problem=self._problem)
        return view_from_answer(job, job_id, answer)


class FlockPools:
    """The pools the schedd may flock to and their slots, fetched once for every job."""

    def __init__(self, home, schedd_name: str | None) -> None:
        self._home = home
        self.collectors = flock_collectors(home, schedd_name)
        self._slots: dict[str, tuple[str, list | None, str | None]] | None = None

    def counts(self, job) -> list[PoolCount]:
        """Each flock pool's count of slots that match ``job``, or why it could not be asked."""
        if self._slots is None:
            self._slots = self._fetch()
        found = []
        for collector in self.collectors:
            name, slots, problem = self._slots[collector]
            found.append(PoolCount(name, collector, problem=problem) if slots is None
                         else count_pool(job, name, collector, slots))
        return found

    def _fetch(self) -> dict[str, tuple[str, list | None, str | None]]:
        if not self.collectors:
            return {}
        trusted, problem = trusted_pools(self._home)
        return {collector: pool_slots(collector, trusted, problem) for collector in self.collectors}


def flock_collectors(home, schedd_name: str | None) -> list[str]:
    """``host:port`` of each flock collector: this host's ``FLOCK_COLLECTOR_HOSTS``/``FLOCK_TO``
    when the schedd is this host's, then any the Scheduler ad's ``EffectiveFlockList`` adds."""
    from bindings.enums import DaemonType
    from daemoncore.config import Config
    from schedd.flocking import FlockSettings, pool_key

    found = [pool_key(address) for address in FlockSettings.from_config(Config.load()).collectors] \
        if schedd_name is None else []
    try:
        ad = home.locate(DaemonType.Schedd, schedd_name)
    except ValueError:
        ad = {}
    effective = ad.get("EffectiveFlockList")
    for item in effective.split(",") if isinstance(effective, str) else ():
        if item.strip() and item.strip() not in found:
            found.append(item.strip())
    return found


def trusted_pools(home) -> tuple[dict, str | None]:
    """The pools this pool trusts (name to ``TrustedPool``), read from the home collector
    with this host's daemon token; empty and the reason when the token cannot be read
    or the collector does not give them."""
    from daemoncore.config import Config
    from daemoncore.security import SecurityError
    from daemoncore.security.daemon_credentials import DAEMON_TOKEN_KNOB
    from daemoncore.security.pool_trust import pools_from_wire
    from daemoncore.wire import collector_routes as api
    from daemoncore.wire.blocking_client import BlockingClient
    from daemoncore.wire.errors import RemoteError, Unreachable

    path = Config.load().param(DAEMON_TOKEN_KNOB, "")
    token = read_token(path) if path else None
    if token is None:
        return {}, NO_DAEMON_TOKEN.format(knob=DAEMON_TOKEN_KNOB, path=path or "unset")
    try:
        answer = BlockingClient(home.address, token=token, timeout=10).call(api.TRUST)
        return pools_from_wire(answer, f"the collector at {home.address}"), None
    except (RemoteError, Unreachable, SecurityError) as exc:
        return {}, f"the home collector did not give the trusted pools: {exc}"


def read_token(path: str) -> str | None:
    """The first token in the file ``path``, or None when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = [line.strip() for line in handle.read(64 * 1024).splitlines()]
    except (OSError, UnicodeDecodeError):
        return None
    return next((line for line in lines if line and not line.startswith("#")), None)


def pool_slots(collector: str, trusted: dict, problem: str | None) -> tuple[str, list | None, str | None]:
    """The name of the trusted pool whose collector is ``collector`` and its slot ads, asked
    with that pool's token over TLS checked against its CA; or None and why not."""
    from bindings.enums import AdType
    from daemoncore.security import SecurityError
    from daemoncore.security.tls_client import PoolTrust
    from daemoncore.wire import collector_routes as api
    from daemoncore.wire.adcodec import ad_from_json
    from daemoncore.wire.blocking_client import BlockingClient
    from daemoncore.wire.errors import RemoteError, Unreachable

    pool = next((pool for pool in trusted.values() if pool.serves(collector)), None)
    if pool is None:
        return collector, None, problem or "this pool does not trust it (run roost pool trust on both central managers)"
    try:
        client = BlockingClient(pool.collector, token=pool.token, timeout=10,
                                trust=PoolTrust.from_pem(pool.ca_pem.encode("ascii", "replace"), f"pool {pool.name}'s CA"))
        wires = client.stream(api.QUERY, {"constraint": "true", "projection": []},
                              ad_type=AdType.Startd.collector_type)
        return pool.name, [ad_from_json(wire, f"slot ad from pool {pool.name}") for wire in wires], None
    except (RemoteError, Unreachable, SecurityError, ValueError) as exc:
        return pool.name, None, f"its collector did not answer the query: {exc}"
