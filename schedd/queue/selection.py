"""Which jobs an action or edit applies to: explicit ``ClusterId.ProcId`` ids,
whole clusters, or a constraint, parsed from what a user typed."""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from jobmodel.states import JobId


@attrs.frozen
class JobSelection:
    """Jobs by id, by whole cluster, or by constraint (an expression text)."""

    ids: tuple[JobId, ...] = ()
    clusters: tuple[int, ...] = ()
    constraint: str | None = None

    @classmethod
    def from_spec(cls, spec: "str | Iterable[str] | JobId") -> "JobSelection":
        """A selection from a job spec: a list of ``"C.P"`` or ``"C"`` strings, one
        such string, or any other string taken as a constraint.

        Raises:
            ValueError: a list item is not a job or cluster id.
        """
        if isinstance(spec, JobId):
            return cls(ids=(spec,))
        if isinstance(spec, str):
            text = spec.strip()
            if _looks_like_id(text):
                return cls.from_spec([text])
            return cls(constraint=text)
        ids, clusters = [], []
        for item in spec:
            text = str(item).strip()
            if text.isdigit():
                clusters.append(int(text))
            else:
                ids.append(JobId.parse(text))
        return cls(ids=tuple(ids), clusters=tuple(clusters))

    def __str__(self) -> str:
        parts = [str(i) for i in self.ids] + [str(c) for c in self.clusters]
        if self.constraint is not None:
            parts.append(f"constraint {self.constraint!r}")
        return ", ".join(parts) or "no jobs"


def _looks_like_id(text: str) -> bool:
    cluster, _, proc = text.partition(".")
    return cluster.isdigit() and (proc == "" or proc.isdigit())
