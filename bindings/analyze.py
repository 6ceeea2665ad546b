"""Why a job does not run: its Requirements taken apart clause by clause and each
clause counted against the pool's slots, in the spirit of HTCondor's
``condor_q -better-analyze``.

Pure: :func:`analyze_job` takes a job ad and slot ads and returns an
:class:`Analysis`; :func:`render_analysis` turns it into the report text. The
command line (``roost q -analyze``) fetches the ads and prints the text.
"""

from __future__ import annotations

from collections.abc import Iterable

from attrs import frozen

import classad
from classad import nodes as nodes
from classad.unparse import unparse_expr

#: JobStatus values and the words the report uses for them.
STATUS_WORDS = {1: "idle", 2: "running", 3: "removed", 4: "completed", 5: "held",
                6: "transferring output", 7: "suspended"}


@frozen
class ClauseCount:
    """One top-level ``&&`` clause of a Requirements expression and how many slots it accepts."""

    text: str
    matched: int


@frozen
class Analysis:
    """What the job's Requirements and the slots' own Requirements say of each other."""

    job_id: str
    status: int
    requirements: str
    clauses: tuple[ClauseCount, ...]
    defined: tuple[tuple[str, str], ...]
    slots: int
    rejected_by_job: int
    rejecting_job: int
    matching: int
    hold_reason: str | None = None

    @property
    def failing(self) -> tuple[ClauseCount, ...]:
        """The clauses that no slot satisfies."""
        return tuple(clause for clause in self.clauses if clause.matched == 0)


def conjuncts(node) -> list:
    """The top-level ``&&`` clauses of expression ``node``, parentheses around an
    ``&&`` chain looked through; a single clause when there is no ``&&``."""
    while type(node) is nodes.Paren and type(node.inner) is nodes.Binary and node.inner.op == "&&":
        node = node.inner
    if type(node) is nodes.Binary and node.op == "&&":
        return conjuncts(node.left) + conjuncts(node.right)
    return [node]


def _unwrapped(node):
    while type(node) is nodes.Paren:
        node = node.inner
    return node


def is_true(value: object) -> bool:
    """ClassAd truth as matchmaking reads it: true, or a non-zero number."""
    if type(value) is bool:
        return value
    if type(value) in (int, float):
        return value != 0
    return False


def _clause_accepts(clause: classad.ExprTree, job: classad.ClassAd, slot: classad.ClassAd) -> bool:
    return is_true(clause.evaluate(job, slot))


def _job_id(job: classad.ClassAd) -> str:
    return f"{job.get('ClusterId', '?')}.{job.get('ProcId', '?')}"


def _defined_attributes(job: classad.ClassAd, requirements: classad.ExprTree) -> tuple[tuple[str, str], ...]:
    """The job's own attributes the Requirements refer to, directly or through each
    other (``RequestDisk = DiskUsage``), with their stored expressions."""
    found: dict[str, tuple[str, str]] = {}
    waiting = list(job.internalRefs(requirements))
    while waiting:
        name = waiting.pop(0)
        node = job.expression(name)
        if node is None or name.lower() in found:
            continue
        text = unparse_expr(node)
        found[name.lower()] = (name, text)
        waiting += job.internalRefs(classad.ExprTree(text))
    return tuple(found.values())


def analyze_job(job: classad.ClassAd, slots: Iterable[classad.ClassAd]) -> Analysis:
    """Count, for each top-level clause of ``job``'s Requirements, the slots it accepts,
    and how many slots the whole expression accepts, reject the job, or match both ways."""
    slots = list(slots)
    node = job.expression("Requirements")
    requirements = classad.ExprTree(unparse_expr(node)) if node is not None else classad.ExprTree("true")
    clauses = [classad.ExprTree(unparse_expr(_unwrapped(part))) for part in conjuncts(node)] if node is not None else []
    counts = tuple(ClauseCount(str(clause), sum(_clause_accepts(clause, job, slot) for slot in slots))
                   for clause in clauses)
    accepted = [is_true(job.evaluate("Requirements", slot)) if node is not None else True for slot in slots]
    accepting = [is_true(slot.evaluate("Requirements", job)) if "Requirements" in slot else True for slot in slots]
    status = job.get("JobStatus", 1)
    return Analysis(
        job_id=_job_id(job), status=status if type(status) is int else 1, requirements=str(requirements),
        clauses=counts, defined=_defined_attributes(job, requirements), slots=len(slots),
        rejected_by_job=accepted.count(False),
        rejecting_job=sum(1 for mine, theirs in zip(accepted, accepting) if mine and not theirs),
        matching=sum(1 for mine, theirs in zip(accepted, accepting) if mine and theirs),
        hold_reason=job.get("HoldReason") if isinstance(job.get("HoldReason"), str) else None,
    )


@frozen
class PoolCount:
    """How many of a pool's slots could run the job, or why that pool could not be asked.

    ``name`` is the pool's name when known (else its collector's address), ``slots`` and
    ``matching`` are None when ``problem`` says why the pool gave no answer."""

    name: str
    collector: str
    slots: int | None = None
    matching: int | None = None
    problem: str | None = None


def count_pool(job: classad.ClassAd, name: str, collector: str, slots: Iterable[classad.ClassAd]) -> PoolCount:
    """The slots among ``slots`` (one pool's) that match ``job`` both ways, as the home count is made."""
    found = analyze_job(job, slots)
    return PoolCount(name, collector, slots=found.slots, matching=found.matching)


def render_pool_counts(analysis: Analysis, home: str, pools: Iterable[PoolCount]) -> str:
    """The per-pool lines ``-better-analyze`` adds for a flocking schedd: the home pool's
    count (from ``analysis``) and each flock pool's, or why it could not be asked; empty
    for a job that is not idle or when there are no flock pools."""
    pools = list(pools)
    if analysis.status != 1 or not pools:
        return ""
    rows = [(f"{home} (home)", f"{analysis.matching} of {analysis.slots}")]
    for pool in pools:
        label = pool.name if pool.name == pool.collector else f"{pool.name} ({pool.collector})"
        rows.append((label, f"{pool.matching} of {pool.slots}" if pool.problem is None
                     else f"cannot be asked: {pool.problem}"))
    width = max(len(label) for label, _ in rows)
    lines = [f"Slots that can run job {analysis.job_id}, at home and in each pool it may flock to (FLOCK_TO):", ""]
    lines += [f"    {label:<{width}}  {text}" for label, text in rows]
    return "\n".join(lines) + "\n\n"


def render_analysis(analysis: Analysis, better: bool = True) -> str:
    """The report on one job: its state, its Requirements, the per-clause table
    (with ``better``), and the summary of how the slots and the job judge each other."""
    job = analysis.job_id
    lines = [""]
    if analysis.status != 1:
        lines.append(f"Job {job} is {STATUS_WORDS.get(analysis.status, f'in state {analysis.status}')}, "
                     f"not idle: there is no match to analyze.")
        if analysis.status == 5 and analysis.hold_reason:
            lines.append(f"Hold reason: {analysis.hold_reason}")
        return "\n".join(lines) + "\n"
    if better:
        lines += [f"The Requirements expression for job {job} is", "", f"    {analysis.requirements}", ""]
        if analysis.defined:
            lines += [f"Job {job} defines these attributes that it uses:", ""]
            lines += [f"    {name} = {text}" for name, text in analysis.defined]
            lines.append("")
        lines += _clause_table(analysis)
    lines += _summary(analysis)
    return "\n".join(lines) + "\n"


def _clause_table(analysis: Analysis) -> list[str]:
    lines = [f"Each condition of job {analysis.job_id}'s Requirements, against the {analysis.slots} slot(s) "
             f"in the pool:", "", "         Slots", "Step    Matched  Condition", "-----  --------  ---------"]
    for step, clause in enumerate(analysis.clauses):
        mark = "   <- no slot satisfies this" if clause.matched == 0 else ""
        lines.append(f"{f'[{step}]':<5}  {clause.matched:>8}  {clause.text}{mark}")
    lines.append("")
    return lines


def _summary(analysis: Analysis) -> list[str]:
    job = analysis.job_id
    lines = [f"{analysis.matching} slots match all of job {job}'s Requirements and accept it; "
             f"{analysis.rejecting_job} slots reject the job by their own Requirements.", "",
             f"{job}:  Run analysis summary, user priority aside. Of {analysis.slots} slots,",
             f"  {analysis.rejected_by_job:>6} are rejected by the job's Requirements",
             f"  {analysis.rejecting_job:>6} reject the job because of their own Requirements",
             f"  {analysis.matching:>6} are able to run the job", ""]
    if analysis.slots == 0:
        lines.append("No slots are in the pool: is a startd running? (`roost status` lists slots)")
    elif analysis.failing:
        names = "; ".join(clause.text for clause in analysis.failing)
        lines.append(f"WARNING: job {job} matches no slot. No slot satisfies: {names}")
    elif analysis.matching == 0 and analysis.rejected_by_job == analysis.slots:
        lines.append(f"WARNING: job {job} matches no slot: every clause is met by some slot, "
                     f"but no slot meets them all together.")
    elif analysis.matching == 0:
        lines.append(f"WARNING: every slot the job accepts rejects job {job}.")
    else:
        lines.append(f"Job {job} can run on {analysis.matching} slot(s); it waits for the negotiator "
                     f"or for its user's turn.")
    return lines


__all__ = ["Analysis", "ClauseCount", "PoolCount", "analyze_job", "conjuncts", "count_pool", "is_true",
           "render_analysis", "render_pool_counts"]
