"""How a job factory makes its procs: the stored submit description is parsed once,
and proc N is expanded alone with the same $(Process), $(Step), $(Item) and
$(ItemIndex) a plain submit gives it, so a materialised proc is the job a plain
submit of the description would have stored (HTCondor's ``JobFactory``, a
``SubmitHash`` that makes one job ad per ``MaterializeNextFactoryJob``).

Not imported by :mod:`schedd.queue` itself: it needs the submit language and the
schedd's intake rules, which import the queue."""

from __future__ import annotations

import os

from classad import ClassAd
from classad.nodes import Literal
from classad.values import UNDEFINED
from schedd.intake import SCHEDD_SET, ClusterToStore, checked_names, owned_by
from schedd.queue.factory import LIMIT_COMMAND, MAX_IDLE_COMMANDS, FactoryDigest
from schedd.submit import SubmitError, host_predefined, parse_description
from schedd.submit.cluster import BuildContext, ClusterBuilder
from schedd.submit.jobad import RULES
from schedd.submit.jobs import MAX_PROCS_PER_SUBMIT, _planned, classad_node, queue_statements, time_predefined
from schedd.submit.macros import MacroScope
from schedd.submit.queue_statement import proc_count
from schedd.submit.values import integer_expression

_STORED_BY_SCHEDD = frozenset(name.lower() for name in SCHEDD_SET)


def factory_limits(text: str, iwd: str, environ: dict[str, str]) -> tuple[int | None, int | None] | None:
    """``(max_materialize, max_idle)`` when the description asks for late
    materialisation (either command given), else None. As in HTCondor's
    condor_submit, ``max_materialize`` wins and ``max_idle`` (or
    ``materialize_max_idle``) alone gives no limit on the procs present.

    Raises:
        SubmitError: a value is not an integer expression, or the description has
            more than one queue statement.
    """
    description = parse_description(text, cwd=iwd, predefined=host_predefined(), self_contained=True)
    statements = queue_statements(description)
    commands = statements[0].commands
    if LIMIT_COMMAND not in commands and not any(name in commands for name in MAX_IDLE_COMMANDS):
        return None
    if len(statements) > 1:
        raise SubmitError(f"max_materialize and max_idle (late materialization) take one queue statement; "
                          f"this description has {len(statements)}: submit each as its own cluster")
    scope = MacroScope({k: c.value for k, c in commands.items()}, predefined=host_predefined(), cwd=iwd,
                       environ=environ, self_contained=True)
    limit = _integer(scope, commands, LIMIT_COMMAND)
    idle = next((_integer(scope, commands, name) for name in MAX_IDLE_COMMANDS if name in commands), None)
    return limit, idle


def _integer(scope: MacroScope, commands, name: str) -> int | None:
    command = commands.get(name)
    if command is None:
        return None
    text = scope.expand(command.value)
    try:
        return integer_expression(text)
    except ValueError:
        raise SubmitError(f"{text.strip()!r} is not an integer: {name} takes a count of jobs",
                          file=command.file, line=command.line, command=command.name) from None


class ProcMaker:
    """Makes any proc of one factory cluster from its digest.

    Raises:
        SubmitError: the description does not parse or queues no job.
    """

    def __init__(self, digest: FactoryDigest, cluster_id: int, domain: str) -> None:
        self.cluster_id = cluster_id
        self.domain = domain
        self.owner = digest.owner
        description = parse_description(digest.description, cwd=digest.iwd, predefined=host_predefined(),
                                        self_contained=True)
        predefined = {**host_predefined(), **time_predefined(digest.qdate)}
        self.context = BuildContext(os.path.abspath(digest.iwd), digest.owner, dict(digest.environ), predefined,
                                    True, dict(digest.file_sizes))
        self.statement, self.spec, self.rows = _planned(queue_statements(description)[0], self.context)
        self.total = proc_count(self.spec, self.rows)
        if self.total > MAX_PROCS_PER_SUBMIT:
            raise SubmitError(f"the description queues {self.total} jobs, more than the {MAX_PROCS_PER_SUBMIT} "
                              f"one submit may hold; split it", command="queue")
        self._common: dict[str, tuple[str, object]] | None = None

    @property
    def per_row(self) -> int:
        """How many procs each item row makes (the ``queue N`` count, at least 1)."""
        return max(self.spec.count, 1)

    def _attrs(self, proc_id: int) -> dict[str, tuple[str, object]]:
        """Every attribute of proc ``proc_id``, built alone as a plain submit builds it."""
        count = max(self.spec.count, 1)
        row = self.rows[proc_id // count] if self.rows is not None else None
        step = proc_id % count if self.rows is not None else proc_id
        cluster, index = str(self.cluster_id), str(row.index if row else 0)
        live = {"cluster": cluster, "clusterid": cluster, "process": str(proc_id), "procid": str(proc_id),
                "step": str(step), "jobid": f"{cluster}.{proc_id}", "node": "", "itemindex": index, "row": index}
        items = {name.lower(): value for name, value in row.values} if row else {}
        builder = ClusterBuilder(RULES, self.statement.commands, self.context)
        builder.add_proc(live, items, {"ProcId": proc_id, "ClusterId": self.cluster_id})
        return builder.result.proc_attrs(0)

    def cluster_ad(self) -> ClassAd:
        """The factory's cluster ad: proc 0's attributes, owned as the schedd stores them.

        Raises:
            SubmitError: proc 0 cannot be made.
            IntakeError: an attribute name is not a ClassAd identifier.
        """
        self._common = self._attrs(0)
        ad = ClassAd.from_entries((name, classad_node(value)) for key, (name, value) in self._common.items()
                                  if key != "procid")
        return owned_by(checked_names(ClusterToStore(ad, ())), self.owner, self.domain).cluster_ad

    def proc_ads(self, proc_ids: range) -> list[ClassAd]:
        """The differences of each proc from the cluster ad, as a plain submit stores
        them (an attribute proc 0 has and this proc lacks is undefined here)."""
        if self._common is None:
            self.cluster_ad()
        common = self._common
        ads = []
        for proc_id in proc_ids:
            whole = self._attrs(proc_id)
            differs = [(name, classad_node(value)) for key, (name, value) in whole.items()
                       if key not in _STORED_BY_SCHEDD and (key not in common or not _same(common[key][1], value))]
            missing = [(name, Literal(UNDEFINED)) for key, (name, _) in common.items()
                       if key not in whole and key not in _STORED_BY_SCHEDD]
            ads.append(ClassAd.from_entries(differs + missing))
        return ads


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and a == b



class FactoryMakers:
    """The proc makers of a schedd's factories, each parsed once from its digest and
    kept while it is used (at most ``keep`` of them at a time); called as
    ``make_procs`` by :meth:`schedd.queue.JobQueue.materialize`."""

    def __init__(self, domain: str, keep: int = 64) -> None:
        self.domain = domain
        self.keep = keep
        self._makers: dict[int, ProcMaker] = {}

    def add(self, maker: ProcMaker) -> None:
        """Keep the maker a submit already built."""
        if len(self._makers) >= self.keep:
            self._makers.pop(next(iter(self._makers)))
        self._makers[maker.cluster_id] = maker

    def maker(self, cluster_id: int, digest: str) -> ProcMaker:
        """The maker of factory ``cluster_id``, built from its ``digest`` when not kept.

        Raises:
            SubmitError: the description does not parse or queues no job.
        """
        maker = self._makers.get(cluster_id)
        if maker is None:
            maker = ProcMaker(FactoryDigest.from_text(digest), cluster_id, self.domain)
            self.add(maker)
        return maker

    def __call__(self, cluster_id: int, digest: str, proc_ids: range) -> list[ClassAd]:
        return self.maker(cluster_id, digest).proc_ads(proc_ids)


__all__ = ["FactoryMakers", "ProcMaker", "factory_limits"]
