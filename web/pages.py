"""What each page shows, as plain data made from ads in their JSON form: pure, so the
pages and their JSON twins come from one place and tests feed it fixed ads. Values
from ads stay as they are; the templates escape them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping

import classad
from daemoncore.wire.adcodec import ad_from_json
from startd.gpu_view import card_views
from web.card_bar import card_segments, utilisation_class

#: JobStatus numbers the queue counts.
IDLE, RUNNING, HELD = 1, 2, 5
#: Rows a table shows at most; the page says how many were left out.
MAX_ROWS = 500


def _num(value: object) -> float:
    return float(value) if type(value) in (int, float) else 0.0


def _text(value: object, default: str = "") -> str:
    return value if isinstance(value, str) else default


def pool_page(slots: Iterable[Mapping]) -> dict:
    """Slots by state and activity, and per host the CPUs, memory and GPUs in use and free.

    A partitionable slot's free part is its own ``Cpus``/``Memory``; its dynamic slots
    hold the rest. The slot counts leave partitionable slots out when they have children,
    as ``condor_status`` counts them."""
    by_state: Counter = Counter()
    by_activity: Counter = Counter()
    hosts: dict[str, dict] = defaultdict(lambda: {"cpus_used": 0.0, "cpus_free": 0.0, "memory_used": 0.0,
                                                  "memory_free": 0.0, "gpus_used": 0.0, "gpus_free": 0.0,
                                                  "slots": 0})
    for slot in slots:
        host = hosts[_text(slot.get("Machine"), "?")]
        state = _text(slot.get("State"), "Unknown")
        free = state == "Unclaimed" or slot.get("PartitionableSlot") is True
        kind = "free" if free else "used"
        host[f"cpus_{kind}"] += _num(slot.get("Cpus"))
        host[f"memory_{kind}"] += _num(slot.get("Memory"))
        host[f"gpus_{kind}"] += _num(slot.get("GPUs"))
        host["slots"] += 1
        by_state[state] += 1
        by_activity[(state, _text(slot.get("Activity"), "Unknown"))] += 1
    return {
        "slots_by_state": [{"state": state, "count": count} for state, count in sorted(by_state.items())],
        "slots_by_activity": [{"state": s, "activity": a, "count": c} for (s, a), c in sorted(by_activity.items())],
        "hosts": [{"host": name, **values} for name, values in sorted(hosts.items())][:MAX_ROWS],
        "host_count": len(hosts),
        "slot_count": sum(by_state.values()),
    }


def gpus_page(slots: Iterable[Mapping], utilisation: Mapping[str, float] | None = None) -> dict:
    """Every card with its memory and cores, the shares of the jobs on it, and its bar
    (:func:`web.card_bar.card_segments`), coloured by its ``utilisation`` (0..1 by card
    UUID, from the startds' metrics) where a sample gives it."""
    views = card_views(ad_from_json(dict(slot), "slot ad") for slot in slots)
    cards = []
    for view in views[:MAX_ROWS]:
        card = view.card
        shares = [{"job": share.job, "slot": share.slot, "memory": share.memory_mib, "cores": share.cores,
                   "whole": share.whole} for share in view.shares]
        ratio = (utilisation or {}).get(card.uuid)
        cards.append({
            "id": card.id, "uuid": card.uuid, "host": view.host, "model": card.name, "numa_node": card.numa_node,
            "memory_total": card.memory_total, "memory_used": card.memory_used, "cores_used": card.cores_used,
            "shares": shares, "bar": card_segments(card.memory_total, shares), "utilisation": ratio,
            "utilisation_class": utilisation_class(ratio),
        })
    return {"cards": cards, "card_count": len(views)}


def queue_page(jobs: Iterable[Mapping]) -> dict:
    """Idle, running and held counts per user and per batch (``JobBatchName``, else the cluster)."""
    users: dict[str, Counter] = defaultdict(Counter)
    batches: dict[tuple[str, str], Counter] = defaultdict(Counter)
    total = 0
    for job in jobs:
        status = job.get("JobStatus")
        word = {IDLE: "idle", RUNNING: "running", HELD: "held"}.get(status)
        if word is None:
            continue
        owner = _text(job.get("Owner"), "?")
        batch = _text(job.get("JobBatchName")) or f"ID: {job.get('ClusterId')}"
        users[owner][word] += 1
        batches[(owner, batch)][word] += 1
        total += 1
    rows = [{"owner": owner, "batch": batch, "idle": c["idle"], "running": c["running"], "held": c["held"]}
            for (owner, batch), c in sorted(batches.items())]
    return {
        "users": [{"owner": owner, "idle": c["idle"], "running": c["running"], "held": c["held"]}
                  for owner, c in sorted(users.items())],
        "batches": rows[:MAX_ROWS],
        "batch_count": len(rows),
        "job_count": total,
    }


def job_counts(jobs: Iterable[Mapping]) -> tuple[int, int, int]:
    """(running, idle, held) of ``jobs``."""
    counts = Counter(job.get("JobStatus") for job in jobs)
    return counts[RUNNING], counts[IDLE], counts[HELD]


#: The times in a job ad the timeline is made of, in the order they happen.
TIMELINE = (("QDate", "Submitted"), ("JobCurrentStartDate", "Started running"),
            ("JobLastStartDate", "Last started before"), ("LastVacateTime", "Evicted"),
            ("LastHoldTime", "Held"), ("LastReleaseTime", "Released"), ("CompletionDate", "Completed"),
            ("EnteredCurrentStatus", "Entered its current status"))


def job_events(ad: Mapping) -> list[dict]:
    """The job's life from its ad's times, oldest first (each ``time``, ``what``)."""
    found = [{"time": int(ad[name]), "what": what, "attribute": name}
             for name, what in TIMELINE if type(ad.get(name)) in (int, float) and ad[name] > 0]
    return sorted(found, key=lambda event: event["time"])


def job_page(ad: Mapping, analysis: str | None, logged: list[dict] | None = None) -> dict:
    """A job's ad (in HTCondor's long form), its timeline, where it ran, why it is held,
    and for an idle job the ``-better-analyze`` text. The timeline is ``logged`` (rows of
    :func:`web.timeline.logged_timeline`, from the job's event log) when there are any,
    else the times in the ad."""
    parsed = ad_from_json(dict(ad), "job ad")
    status = ad.get("JobStatus")
    return {
        "job_id": f"{ad.get('ClusterId')}.{ad.get('ProcId')}",
        "status": status,
        "owner": _text(ad.get("Owner")),
        "batch": _text(ad.get("JobBatchName")),
        "ad_text": "\n".join(f"{name} = {parsed.lookup(name)}" for name in sorted(parsed.keys(), key=str.lower)),
        "events": logged or job_events(ad),
        "events_source": "log" if logged else "ad",
        "ran_on": _text(ad.get("RemoteHost")) or _text(ad.get("LastRemoteHost")),
        "hold_reason": _text(ad.get("HoldReason")) if status == HELD else None,
        "analysis": analysis if status == IDLE else None,
    }


def fairshare_page(priorities: Iterable[Mapping], cycle: Mapping) -> dict:
    """Users with priority, factor and usage; groups with quota, limit, weight and use."""
    users = [{"name": _text(row.get("Name") or row.get("name")),
              "priority": row.get("EffectivePriority", row.get("effective_priority")),
              "factor": row.get("PriorityFactor", row.get("factor")),
              "in_use": row.get("ResourcesUsed", row.get("resources_used")),
              "usage": row.get("AccumulatedUsage", row.get("accumulated_usage")),
              "is_group": bool(row.get("IsAccountingGroup", False))}
             for row in priorities]
    groups = [{"name": _text(group.get("name")), "quota": group.get("quota"),
               "config_quota": group.get("config_quota"), "limit": group.get("limit"),
               "weight": group.get("surplus_weight"), "accept_surplus": group.get("accept_surplus"),
               "in_use": group.get("in_use")}
              for group in cycle.get("groups") or () if isinstance(group, Mapping)]
    return {"users": [user for user in users if not user["is_group"]][:MAX_ROWS], "groups": groups[:MAX_ROWS]}


def flocking_page(schedds: Iterable[Mapping], submitters: Iterable[Mapping], jobs: Iterable[Mapping]) -> dict:
    """The pools this pool's schedds flock to with the jobs running there, and the
    schedds of other pools that flock here with the jobs they run here."""
    local = {_text(ad.get("Name")) for ad in schedds}
    to: dict[str, Counter] = defaultdict(Counter)
    for ad in schedds:
        for pool in _text(ad.get("EffectiveFlockList")).split(","):
            if pool.strip():
                to[pool.strip()]["schedds"] += 1
    for job in jobs:
        pool = _text(job.get("RemotePool"))
        if pool and job.get("JobStatus") == RUNNING:
            to[pool]["running"] += 1
    came: dict[str, Counter] = defaultdict(Counter)
    for ad in submitters:
        schedd = _text(ad.get("ScheddName"))
        if schedd and schedd not in local:
            came[schedd]["running"] += int(_num(ad.get("RunningJobs")))
            came[schedd]["idle"] += int(_num(ad.get("IdleJobs")))
    return {
        "flock_to": [{"pool": pool, "running": c["running"], "schedds": c["schedds"]} for pool, c in sorted(to.items())],
        "flock_from": [{"schedd": schedd, "running": c["running"], "idle": c["idle"]}
                       for schedd, c in sorted(came.items())],
    }


def better_analyze(job: Mapping, slots: Iterable[Mapping], cycle: Mapping | None) -> str:
    """The ``roost q -better-analyze`` text of an idle job, from the same code the command uses."""
    from bindings.analyze import analyze_job, render_analysis
    from bindings.wait_reason import CycleView, view_from_answer, waiting_sentence

    ad = ad_from_json(dict(job), "job ad")
    slot_ads: list[classad.ClassAd] = [ad_from_json(dict(slot), "slot ad") for slot in slots]
    analysis = analyze_job(ad, slot_ads)
    text = render_analysis(analysis, better=True)
    view = view_from_answer(ad, analysis.job_id, cycle) if cycle else CycleView(problem="no negotiator answered")
    failing = [clause.text for clause in analysis.failing]
    return text + "\n" + waiting_sentence(analysis, view, failing) + "\n"
