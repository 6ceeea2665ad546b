"""From a parsed description to job ads: queue statements expanded into procs, the
host's predefined macros, misspelling warnings, and conversion to ClassAds."""

from __future__ import annotations

import datetime
import difflib
import os
import platform
import warnings
from typing import Iterator, Mapping

import attrs

from schedd.submit.cluster import DELETED, BuildContext, ClusterBuilder, ExpandedCluster
from schedd.submit.description import Description, QueueStatement
from schedd.submit.errors import SubmitError, SubmitWarning
from schedd.submit.gpus import GPU_COMMANDS, SHARE_COMMANDS
from schedd.submit.grid import GRID_COMMANDS
from schedd.submit.jobad import RULES, SIMPLE_COMMANDS
from schedd.submit.macros import MacroScope
from schedd.submit.queue_statement import item_rows, parse_queue_args, proc_count, proc_rows
from schedd.submit.values import UNDEFINED, Expr

_ARCH_NAMES = {"x86_64": "X86_64", "amd64": "X86_64", "aarch64": "AARCH64", "arm64": "AARCH64",
               "ppc64le": "PPC64LE", "i386": "INTEL", "i686": "INTEL"}

#: commands with a meaning (misspellings of these get a warning)
KNOWN_COMMANDS = set(SIMPLE_COMMANDS) | {
    "universe", "executable", "arguments", "arguments2", "allow_arguments_v1", "environment",
    "environment2", "env", "allow_environment_v1", "getenv", "input", "output", "error", "log",
    "log_xml", "initialdir", "initial_dir", "transfer_input", "transfer_output",
    "transfer_error", "transfer_executable", "transfer_input_files", "transfer_output_files",
    "transfer_output_remaps", "transfer_checkpoint_files", "transfer_plugins",
    "should_transfer_files", "when_to_transfer_output", "public_input_files",
    "email_attributes", "use_oauth_services", "output_destination", "checkpoint_destination",
    "aws_access_key_id_file", "aws_secret_access_key_file", "s3_access_key_id_file",
    "s3_secret_access_key_file", "gs_access_key_id_file", "gs_secret_access_key_file",
    "aws_region", "request_cpus", "request_memory", "request_disk", "request_gpus",
    *GPU_COMMANDS, *GRID_COMMANDS, "requirements",
    "priority", "hold", "nice_user", "notification", "accounting_group",
    "accounting_group_user", "concurrency_limits", "concurrency_limits_expr", "max_retries",
    "retry_until", "success_exit_code", "image_size", "machine_count", "container_image",
    "transfer_container", "container_target_dir", "vm_type", "vm_memory", "vm_disk",
    "vm_vcpus", "vm_checkpoint", "vm_networking", "vm_vnc", "dagman_log", "starter_log",
    "max_materialize", "copy_to_spool", "skip_filechecks", "rendezvousdir", "x509userproxy",
    "use_scitokens", "gang_size", "cron_window", "cron_prep_time", "prio", "preferences",
}


_REQUESTS = ["request_cpus", "request_memory", "request_disk", "request_gpus", *SHARE_COMMANDS]

#: At most this many procs in one submit: checked from the counts and items before
#: any proc is made, by the client and by the schedd alike.
MAX_PROCS_PER_SUBMIT = 1_000_000


def host_predefined() -> dict[str, str]:
    """Macros every description can use that describe this host."""
    arch = _ARCH_NAMES.get(platform.machine().lower(), platform.machine().upper())
    system = platform.system().upper() or "LINUX"
    return {"arch": arch, "opsys": system, "islinux": "1" if system == "LINUX" else "0",
            "iswindows": "1" if system == "WINDOWS" else "0"}


def time_predefined(qdate: int) -> dict[str, str]:
    moment = datetime.datetime.fromtimestamp(qdate, datetime.timezone.utc)
    return {"submit_time": str(qdate), "year": f"{moment.year:04d}",
            "month": f"{moment.month:02d}", "day": f"{moment.day:02d}"}


@attrs.frozen
class SubmitOptions:
    """What a submission takes besides the description."""

    cluster_id: int = 1
    proc_id: int = 0
    qdate: int = 0
    owner: str | None = None
    cwd: str = "."
    environ: Mapping[str, str] = attrs.field(factory=lambda: dict(os.environ))
    #: the schedd's mode: refuse include, $ENV, and items from files, commands or globs
    self_contained: bool = False
    #: in that mode, file sizes (KiB by absolute path) the submitting client measured
    file_sizes: Mapping[str, int] = attrs.field(factory=dict)


def warn_misspellings(description: Description) -> list[str]:
    """Warn about commands that look like a misspelled well-known command."""
    messages = []
    for key, command in description.commands.items():
        if key in KNOWN_COMMANDS or key.startswith("my.") or "." in key:
            continue
        if key.endswith("_container_port"):
            continue
        known = _REQUESTS if key.startswith("request_") else sorted(KNOWN_COMMANDS)
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
        if close:
            where = f"{command.file or '<submit description>'}, line {command.line}"
            message = (f"{where}: {command.name!r} is not a submit command (kept as a macro); "
                       f"did you mean {close[0]!r}?")
            messages.append(message)
            warnings.warn(message, SubmitWarning, stacklevel=4)
    return messages


def queue_statements(description: Description) -> tuple[QueueStatement, ...]:
    """The queue statements; a description with none queues one job."""
    if description.queues:
        return description.queues
    return (QueueStatement("", 0, description.commands),)


def planned_procs(description: Description, options: SubmitOptions) -> int:
    """How many procs :func:`expand` makes of ``description``, read from its queue
    statements' arguments and items alone (no proc is expanded): a large submit can be
    told from a small one before it is expanded.

    Raises:
        SubmitError: a queue statement is wrong, or they queue more than MAX_PROCS_PER_SUBMIT.
    """
    return sum(proc_count(spec, rows) for _, spec, rows in _checked_plan(description, _context(options)))


def _context(options: SubmitOptions) -> BuildContext:
    predefined = {**host_predefined(), **time_predefined(options.qdate)}
    return BuildContext(os.path.abspath(options.cwd), options.owner, options.environ,
                        predefined, options.self_contained, options.file_sizes)


def expand(description: Description, options: SubmitOptions) -> list[ExpandedCluster]:
    """Every queue statement expanded into a cluster ad and per-proc differences;
    raises :class:`SubmitError` and produces nothing when any proc fails."""
    warn_misspellings(description)
    context = _context(options)
    planned = _checked_plan(description, context)
    results = []
    proc_id = options.proc_id
    for statement, spec, rows in planned:
        cluster, proc_id = _expand_statement(statement, spec, rows, options, context, proc_id)
        results.append(cluster)
    return results


def _checked_plan(description: Description, context: BuildContext) -> list:
    """Every queue statement planned (:func:`_planned`), refused when together they
    queue more than MAX_PROCS_PER_SUBMIT procs."""
    planned = [_planned(statement, context) for statement in queue_statements(description)]
    total = 0
    for statement, spec, rows in planned:
        total += proc_count(spec, rows)
        if total > MAX_PROCS_PER_SUBMIT:
            raise SubmitError(f"the description queues more than the {MAX_PROCS_PER_SUBMIT} jobs one submit "
                              f"may hold (this statement makes {proc_count(spec, rows)}); split it",
                              file=statement.file, line=statement.line, command="queue")
    return planned


def _planned(statement: QueueStatement, context: BuildContext):
    """A queue statement with its parsed arguments and its item rows, no proc made yet."""
    spec = parse_statement(statement, context)
    try:
        rows = item_rows(spec, context.cwd, self_contained=context.self_contained)
    except SubmitError as exc:
        raise exc.located(file=statement.file, line=statement.line, command="queue") from None
    return statement, spec, rows


def parse_statement(statement: QueueStatement, context: BuildContext):
    scope = MacroScope({k: c.value for k, c in statement.commands.items()},
                       predefined=context.predefined, cwd=context.cwd, environ=context.environ,
                       self_contained=context.self_contained)
    try:
        return parse_queue_args(scope.expand(statement.args))
    except SubmitError as exc:
        raise exc.located(file=statement.file, line=statement.line, command="queue") from None


def _expand_statement(statement: QueueStatement, spec, rows, options: SubmitOptions,
                      context: BuildContext, first_proc: int) -> tuple[ExpandedCluster, int]:
    builder = ClusterBuilder(RULES, statement.commands, context)
    cluster = str(options.cluster_id)
    parallel = (statement.commands.get("universe") is not None
                and statement.commands["universe"].value.strip().lower() == "parallel")
    proc_id = first_proc
    last = first_proc + proc_count(spec, rows)
    for step, row in proc_rows(spec, rows):
        items = {name.lower(): value for name, value in row.values} if row else {}
        if not builder.reads_procs(items):  # a proc no rule looks at: only its ProcId is its own
            if row is None:  # no proc after it has items either
                builder.add_plain_procs(range(proc_id, last))
                proc_id = last
                break
            builder.add_plain_procs(range(proc_id, proc_id + 1))
            proc_id += 1
            continue
        live = {"cluster": cluster, "clusterid": cluster, "process": str(proc_id),
                "procid": str(proc_id), "step": str(step), "jobid": f"{cluster}.{proc_id}",
                "node": "#pArAlLeLnOdE#" if parallel else "",
                "itemindex": str(row.index if row else 0), "row": str(row.index if row else 0)}
        builder.add_proc(live, items, {"ProcId": proc_id} if builder.result else
                         {"ProcId": proc_id, "ClusterId": options.cluster_id})
        proc_id += 1
    result = builder.result
    if result is None:
        result = ExpandedCluster({})
    else:
        cluster_attrs = result.cluster
        cluster_attrs["clusterid"] = ("ClusterId", options.cluster_id)
        result.procs[0].pop("clusterid", None)
    return result, proc_id


def classad_node(value: object):
    """A submit value as a ClassAd expression node (parsed once per distinct text)."""
    from classad.convert import python_to_node
    from schedd.submit.exprs import tree

    if isinstance(value, Expr):
        return tree(value.text).node
    if value is UNDEFINED:
        from classad.values import UNDEFINED as CLASSAD_UNDEFINED

        value = CLASSAD_UNDEFINED
    return python_to_node(value)


def to_classads(expanded: list[ExpandedCluster]) -> Iterator:
    """Complete job ads (cluster attributes merged with each proc's) as ClassAds; the
    cluster's expression nodes are shared, never copied."""
    from schedd.submit.exprs import ClassAd

    for cluster in expanded:
        shared = ClassAd.from_entries((name, classad_node(v)) for name, v in cluster.cluster.values())
        for diff in cluster.procs:
            deleted = [name for name, value in diff.values() if value is DELETED]
            changes = [(name, classad_node(value)) for name, value in diff.values() if value is not DELETED]
            yield shared.derive(changes, deleted)

__all__ = ["MAX_PROCS_PER_SUBMIT", "SubmitOptions", "expand", "planned_procs", "to_classads", "warn_misspellings",
           "UNDEFINED"]
