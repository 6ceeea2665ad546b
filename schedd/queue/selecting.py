"""Which jobs an action reaches, read from the queue: the selected jobs with their
ads, each once (named ids, then whole clusters, then a constraint's matches), all at
once inside one transaction or a page at a time for a batched action, and the checks
that refuse a request about named jobs before anything changes."""

from __future__ import annotations

from collections.abc import Iterator

from classad import ClassAd, compile_constraint, is_everything
from jobmodel.errors import JobNotFoundError
from schedd.queue.answers import stored_pairs
from schedd.queue.db import JobRow
from schedd.queue.screen import cluster_literals, has_no_call, mentions, quoted, screened_ad, screened_names
from schedd.queue.selection import JobSelection
from schedd.queue.stored import Entries


class JobSelecting:
    """The selection side of :class:`schedd.queue.JobQueue` (which provides ``db``,
    ``clock``, ``_ad_of``, ``_with_ad``, ``_stored_pairs`` and ``_check_owner``)."""

    def _selected(self, selection: JobSelection) -> Iterator[tuple[JobRow, ClassAd]]:
        """The selected jobs with their whole ads, in order, each once, one at a time
        (so a 100,000-job action never holds 100,000 ads). Call inside a transaction:
        rows written or deleted meanwhile are fine, pages are read by key."""
        seen: set[tuple[int, int]] = set()
        rows: list[JobRow] = []
        for job_id in selection.ids:
            row = self.db.get_job(job_id.cluster, job_id.proc)
            if row is None:
                raise JobNotFoundError(f"job {job_id} is not in the queue")
            rows.append(row)
        for cluster_id in selection.clusters:
            found = list(self.db.find_jobs(cluster_id=cluster_id))
            if not found and self.db.get_cluster_attrs(cluster_id) is None:
                raise JobNotFoundError(f"cluster {cluster_id} is not in the queue")
            rows.extend(found)
        for row in rows:
            if (row.cluster_id, row.proc_id) not in seen:
                seen.add((row.cluster_id, row.proc_id))
                yield row, self._ad_of(row)
        if selection.constraint is not None:
            predicate = compile_constraint(selection.constraint)
            for row in self.db.find_jobs():
                if (row.cluster_id, row.proc_id) in seen:
                    continue
                ad = self._ad_of(row)
                if predicate(ad):
                    yield row, ad

    def _check_named(self, make, action, selection: JobSelection, reason: str,
                     actor: str | None) -> None:
        """Refuse, changing nothing, what :meth:`act` would refuse about named jobs and clusters."""
        for job_id in selection.ids:
            row = self.db.get_job(job_id.cluster, job_id.proc)
            if row is None:
                raise JobNotFoundError(f"job {job_id} is not in the queue")
            self._check_owner(row, actor, action.value.lower())
            make(self._ad_of(row), reason, self.clock)
        for cluster_id in selection.clusters:
            if self.db.get_cluster_attrs(cluster_id) is None:
                raise JobNotFoundError(f"cluster {cluster_id} is not in the queue")
            other = None if actor is None else self.db.find_other_owner(cluster_id, actor)
            if other is not None:
                self._check_owner(other, actor, action.value.lower())

    def _selected_pages(self, selection: JobSelection, predicate,
                        batch: int) -> Iterator[list[tuple[JobRow, ClassAd | None, Entries | None]]]:
        """The selected jobs, each once, a page of at most ``batch`` examined rows at a
        time, each page read when asked for (inside its transaction). A named job comes
        with its ad and decoded entries; a job of a named cluster, or matched by a
        constraint decided without its whole ad (see :mod:`schedd.queue.screen`), with
        None for both, the ad then built only if the action needs it."""
        seen: set[tuple[int, int]] = set()
        for start in range(0, len(selection.ids), batch):
            rows = (self.db.get_job(j.cluster, j.proc) for j in selection.ids[start:start + batch])
            page = [self._with_ad(row) for row in rows if row is not None and _first_time(row, seen)]
            yield page
        for cluster_id in selection.clusters:
            after = (cluster_id, -1)
            while True:
                rows = self.db.jobs_after(after, batch, cluster_id)
                yield [(row, None, None) for row in rows if _first_time(row, seen)]
                if len(rows) < batch:
                    break
                after = (rows[-1].cluster_id, rows[-1].proc_id)
        if predicate is None:
            return
        selected = self._selector(selection.constraint, predicate)
        after = (-1, -1)
        while True:
            rows = self.db.jobs_after(after, batch)
            page = []
            for row in rows:
                if (row.cluster_id, row.proc_id) not in seen:
                    found = selected(row)
                    if found is not None:
                        page.append(found)
            yield page
            if len(rows) < batch:
                return
            after = (rows[-1].cluster_id, rows[-1].proc_id)

    def _selector(self, constraint, predicate):
        """A row's ``(row, ad, entries)`` when ``predicate`` matches it, else None: decided
        on the few literal attributes ``constraint`` reads when it can be (ad and entries
        then None), else on the whole ad."""
        if is_everything(predicate):
            return lambda row: (row, None, None)
        names = screened_names(constraint) if isinstance(constraint, str) else None
        # a proc whose text names none of them has its cluster's answer (when no call can change it)
        keys = quoted(names) if names is not None and has_no_call(constraint) else None
        # a cluster id, its literals and the answer of its procs naming none of ``keys`` (None: not known yet)
        last: list = [None, None, None]

        def selected(row: JobRow):
            if names is not None:
                if last[0] != row.cluster_id:
                    last[:] = [row.cluster_id, cluster_literals(self._stored_pairs(row.cluster_id), names), None]
                if keys is not None and not mentions(row.attrs, keys):
                    if last[2] is None:
                        screened = screened_ad(last[1], (), names)
                        last[2] = _WHOLE_AD if screened is None else bool(predicate(screened))
                    if last[2] is not _WHOLE_AD:
                        return (row, None, None) if last[2] else None
                screened = screened_ad(last[1], stored_pairs(row.attrs), names)
                if screened is not None:
                    return (row, None, None) if predicate(screened) else None
            whole = self._with_ad(row)
            return whole if predicate(whole[1]) else None
        return selected


#: A cluster whose literals cannot decide the constraint: each proc is decided on its whole ad.
_WHOLE_AD = object()


def _first_time(row: JobRow, seen: set[tuple[int, int]]) -> bool:
    """Whether the job is met for the first time (noting it in ``seen``)."""
    key = (row.cluster_id, row.proc_id)
    if key in seen:
        return False
    seen.add(key)
    return True
