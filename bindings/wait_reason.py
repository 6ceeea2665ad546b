"""The last line of ``roost q -better-analyze`` for an idle job: one sentence, with the
numbers, saying what it waits for: a slot that matches (from the slot analysis), or
what the negotiator's last cycle said (``GET /v1/negotiator/last-cycle``): priority,
its group's quota or limit, a concurrency limit, or the rest of its gang.

Pure: :func:`waiting_sentence` takes the job's :class:`~bindings.analyze.Analysis`, its
entry in the last cycle's answer (or why there is none) and returns the sentence.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from attrs import frozen

from bindings.analyze import Analysis

#: The negotiator's reason when no idle slot matched (negotiator/last_cycle.py NO_SLOT).
NO_SLOT = "no idle slot matched its request in the last cycle"


@frozen
class CycleView:
    """What the negotiator's last cycle says of one job: ``started`` is None before any
    cycle; ``reason`` is None when the cycle left none of the job's request waiting;
    ``problem`` says why the negotiator could not be asked (then the rest is empty)."""

    started: float | None = None
    reason: str | None = None
    problem: str | None = None


def submitter_of(job: Mapping) -> str | None:
    """The submitter the negotiator knows the job by: ``<AccountingGroup>@<domain>`` for a
    job in an accounting group, else its ``User``; None when the ad has no User."""
    user = job.get("User")
    if not isinstance(user, str) or "@" not in user:
        return None
    group = job.get("AccountingGroup")
    if isinstance(group, str) and group.strip():
        return f"{group.strip()}@{user.rsplit('@', 1)[1]}"
    return user


def entry_for(job: Mapping, job_id: str, waiting: Sequence[Mapping]) -> Mapping | None:
    """The waiting request of the last cycle that holds the job: among the requests of its
    submitter (by name, else by its user part), the one listing ``job_id``, else the one
    whose fingerprint (the request's resources, limits and gang, evaluated) the job shares."""
    submitter = submitter_of(job)
    mine = [w for w in waiting if w.get("submitter") == submitter]
    if not mine:
        owner = str(job.get("Owner", "")).lower()
        mine = [w for w in waiting if owner and owner in str(w.get("submitter", "")).split("@")[0].lower()]
    listed = [w for w in mine if job_id in (w.get("job_ids") or ())]
    if listed:
        return listed[0]
    alike = [w for w in mine if not w.get("job_ids") and _shares_fingerprint(job, w.get("fingerprint"))]
    return alike[0] if alike else None


def _shares_fingerprint(job, fingerprint) -> bool:
    if not isinstance(fingerprint, Mapping):
        return False
    evaluate = getattr(job, "evaluate", None)
    for name, value in fingerprint.items():
        mine = evaluate(name) if evaluate is not None and name in job else job.get(name)
        if mine != value:
            return False
    return True


def view_from_answer(job: Mapping, job_id: str, answer: object) -> CycleView:
    """The :class:`CycleView` of ``job`` from the route's JSON ``answer``."""
    if not isinstance(answer, Mapping) or not isinstance(answer.get("waiting"), list):
        return CycleView(problem=f"the negotiator answered {str(answer)[:200]!r}, not the last cycle")
    started = answer.get("started")
    entry = entry_for(job, job_id, [w for w in answer["waiting"] if isinstance(w, Mapping)])
    reason = entry.get("reason") if entry is not None else None
    return CycleView(started if isinstance(started, (int, float)) else None,
                     reason.strip().rstrip(".") if isinstance(reason, str) and reason.strip() else None)


def waiting_sentence(analysis: Analysis, view: CycleView, failing: Sequence[str] = ()) -> str:
    """One sentence saying why idle job ``analysis.job_id`` waits; empty for a job not idle."""
    job = analysis.job_id
    if analysis.status != 1:
        return ""
    if analysis.slots == 0:
        return f"Job {job} waits for a slot that matches: the pool has no slots at all."
    if analysis.matching == 0:
        why = f" (no slot satisfies {'; '.join(failing)})" if failing else ""
        return f"Job {job} waits for a slot that matches: none of the {analysis.slots} slot(s) can run it{why}."
    can = f"{analysis.matching} of the {analysis.slots} slot(s) can run it"
    if view.problem is not None:
        return f"Job {job} waits, though {can}; the negotiator could not be asked why: {view.problem}."
    if view.started is None:
        return f"Job {job} waits for the negotiator's first cycle; {can}."
    at = time.strftime("%H:%M:%S", time.localtime(view.started))
    if view.reason is None:
        return (f"Job {job} was not left waiting by the last negotiation cycle (at {at}): it was matched "
                f"and is being claimed, or came after that cycle; {can}.")
    if view.reason.startswith(NO_SLOT):
        return (f"Job {job} waits for a slot that matches and is free: {can}, "
                f"but none was idle for it in the last negotiation cycle (at {at}).")
    return f"Job {job} waits: {view.reason} (negotiation cycle at {at})."
