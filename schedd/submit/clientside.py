"""What only the submitting machine may expand: ``include``, ``$ENV(...)`` and queue
items from a file, a command or a glob. The client expands them here, as the user,
into an equivalent self-contained description, which the schedd expands in its
``self_contained`` mode (where the same forms are refused).
"""

from __future__ import annotations

import os
import re
from collections import OrderedDict
from collections.abc import Mapping

import attrs

from schedd.submit.cluster import BuildContext
from schedd.submit.description import Command, Description, QueueStatement, parse_description
from schedd.submit.errors import SubmitError
from schedd.submit.jobad import file_kib, file_list
from schedd.submit.jobs import SubmitOptions, expand, host_predefined, parse_statement, queue_statements
from schedd.submit.macros import MacroScope, substitute_calls
from schedd.submit.queue_statement import QueueSpec, Row, item_rows, reads_host, split_row

_ENV_CALL = re.compile(r"\$ENV\(", re.I)
#: $RANDOM_CHOICE and $RANDOM_INTEGER: a name made with one differs from submit to submit.
_RANDOM_CALL = re.compile(r"\$RANDOM_", re.I)
#: The commands whose values the schedd takes from the submitter's environment.
_READS_ENVIRON = re.compile(r"getenv|use_scitokens", re.I)


@attrs.frozen
class _Line:
    """One line of the self-contained text and where it came from in the user's files."""

    text: str
    file: str | None
    line: int


def for_schedd(text: str, *, cwd: str, environ: Mapping[str, str],
               assignments: Mapping[str, str] | None = None) -> str:
    """The description to send the schedd: ``text`` itself when it is self-contained,
    else an equivalent text with includes inlined, ``$ENV`` values written in and host
    items listed inline (command-line assignments first). A rewritten text is
    expanded here once first, so an error names the user's own file and line.

    Raises:
        SubmitError: the description is wrong, or an item cannot be written inline.
    """
    return _written_for_schedd(text, cwd=cwd, environ=environ, assignments=assignments)[0]


def _written_for_schedd(text: str, *, cwd: str, environ: Mapping[str, str],
                        assignments: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """:func:`for_schedd`'s text, and whether it is ``text`` itself because ``text`` is
    self-contained (then it depends on nothing but ``text``)."""
    predefined = host_predefined()
    description = parse_description(text, cwd=cwd, predefined=predefined, environ=environ,
                                    assignments=assignments)
    context = BuildContext(os.path.abspath(cwd), None, environ, predefined)
    specs = [parse_statement(statement, context) for statement in description.queues]
    if not (assignments or description.includes or _ENV_CALL.search(text)
            or any(reads_host(spec) for spec in specs)):
        return text, True
    lines = _rendered(description, specs, context)
    rendered = "\n".join(line.text for line in lines) + "\n"
    try:
        expand(parse_description(rendered, cwd=cwd, predefined=predefined, environ=environ),
               SubmitOptions(cwd=cwd, environ=environ, self_contained=True))
    except SubmitError as exc:
        raise _located_in_source(exc, lines) from None
    return rendered, False


#: Self-contained descriptions sent lately, by text and submit directory, with the
#: files :func:`measured_sizes` measures for each: a script submitting one description
#: in a loop parses it once, and measures its files (which may change) on every submit.
_SELF_CONTAINED: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
#: At most this many descriptions are remembered (the least recently used is forgotten).
MAX_REMEMBERED = 64
#: ... each of at most this many characters.
MAX_REMEMBERED_CHARS = 65536


def prepared_for_schedd(text: str, *, cwd: str, environ: Mapping[str, str]) -> tuple[str, dict[str, int]]:
    """:func:`for_schedd` and :func:`measured_sizes` of ``text`` submitted from ``cwd``.
    A self-contained description depends on nothing else (no include, ``$ENV`` or
    items read here), so which files it names is remembered; their sizes are
    measured each time. A wrong description is never remembered: it raises each time.

    Raises:
        SubmitError: the description is wrong, or an item cannot be written inline.
    """
    key = (text, cwd)
    paths = _SELF_CONTAINED.get(key)
    if paths is not None:
        _SELF_CONTAINED.move_to_end(key)
        return text, {path: file_kib(path) for path in paths}
    sent, self_contained = _written_for_schedd(text, cwd=cwd, environ=environ)
    paths = _measured_paths(text, cwd=cwd, environ=environ)
    if self_contained and len(text) <= MAX_REMEMBERED_CHARS and not _RANDOM_CALL.search(text):
        _SELF_CONTAINED[key] = paths
        if len(_SELF_CONTAINED) > MAX_REMEMBERED:
            _SELF_CONTAINED.popitem(last=False)
    return sent, {path: file_kib(path) for path in paths}


def _located_in_source(exc: SubmitError, lines: list[_Line]) -> SubmitError:
    if exc.file is not None or exc.line is None or not 1 <= exc.line <= len(lines):
        return exc
    source = lines[exc.line - 1]
    return SubmitError(exc.reason, file=source.file, line=source.line, command=exc.command)


def _rendered(description: Description, specs: list[QueueSpec], context: BuildContext) -> list[_Line]:
    """Every queue statement as the commands that changed before it and its queue line."""
    lines: list[_Line] = []
    before: Mapping[str, Command] = {}
    if not description.queues:
        return _command_lines(description.commands, {}, context)
    for statement, spec in zip(description.queues, specs):
        lines += _command_lines(statement.commands, before, context)
        lines += _queue_lines(statement, spec, context)
        before = statement.commands
    return lines


def _command_lines(commands: Mapping[str, Command], before: Mapping[str, Command],
                   context: BuildContext) -> list[_Line]:
    scope = _scope(commands, context)
    lines = []
    for key, command in commands.items():
        if key in before and before[key].value == command.value:
            continue
        value = _env_written_in(command.value, scope)
        body = value.split("\n")
        if len(body) == 1 and not value.endswith("\\") and value == value.strip():
            lines.append(_Line(f"{command.name} = {value}", command.file, command.line))
            continue
        tag = _free_tag(body)
        lines.append(_Line(f"{command.name} @={tag}", command.file, command.line))
        lines += [_Line(part, command.file, command.line) for part in body]
        lines.append(_Line(f"@{tag}", command.file, command.line))
    return lines


def _free_tag(body: list[str]) -> str:
    tag = "end"
    while any(part.strip() == f"@{tag}" for part in body):
        tag += "x"
    return tag


def _scope(commands: Mapping[str, Command], context: BuildContext) -> MacroScope:
    return MacroScope({key: command.value for key, command in commands.items()},
                      predefined=context.predefined, cwd=context.cwd, environ=context.environ)


def _queue_lines(statement: QueueStatement, spec: QueueSpec, context: BuildContext) -> list[_Line]:
    if reads_host(spec):
        try:
            text = "queue " + _inline_args(spec, context.cwd)
        except SubmitError as exc:
            raise exc.located(file=statement.file, line=statement.line, command="queue") from None
    else:
        text = "queue " + _env_written_in(statement.args, _scope(statement.commands, context))
    return [_Line(part, statement.file, statement.line) for part in text.split("\n")]


def _inline_args(spec: QueueSpec, cwd: str) -> str:
    """The arguments of an equivalent ``queue ... from ( ... )`` holding the items
    read here; a slice stays a slice, so each item keeps its index."""
    rows = item_rows(attrs.evolve(spec, slice=None), cwd) or []
    empty = len(rows) == 1 and not any(value for _, value in rows[0].values)
    items = [] if empty else [_item_line(row, spec) for row in rows]
    where = "" if spec.slice is None else "[" + ":".join("" if v is None else str(v) for v in spec.slice) + "] "
    return f"{spec.count} {','.join(spec.variables)} from {where}(\n" + "".join(f"{item}\n" for item in items) + ")"


def _item_line(row: Row, spec: QueueSpec) -> str:
    values = [value for _, value in row.values]
    line = ", ".join(values).rstrip(", ")
    written = line.strip()
    if (not written or written.startswith("#") or any(ch in written for ch in "$)")
            or split_row(line, len(values)) != values):
        raise SubmitError(f"item {row.index} of '{spec.source}' cannot be sent to the schedd: an item "
                          "there may not be empty, start with '#', or hold '$' or ')'", command="queue")
    return line


def _env_written_in(text: str, scope: MacroScope) -> str:
    """``text`` with each ``$ENV(...)`` call replaced by its value here (a ``$`` in
    the value written as ``$(DOLLAR)``); other macros are left for the schedd."""
    def written(func: str, inner: str) -> str:
        if func.upper() == "ENV":
            return scope.expand(f"${func}({inner})").replace("$", "$(DOLLAR)")
        return f"${func}({_env_written_in(inner, scope)})"

    return substitute_calls(text, written) if "$" in text else text


#: At most this many file sizes go with one submit.
MAX_MEASURED_FILES = 1000


def measured_sizes(text: str, *, cwd: str, environ: Mapping[str, str]) -> dict[str, int]:
    """Sizes in KiB of the executable, ``input`` and ``transfer_input_files`` each queue
    statement names, measured here as condor_submit measures them: the schedd never
    looks at its own files for a client, so ``ExecutableSize``, ``ImageSize`` and
    ``DiskUsage`` (hence the default ``RequestMemory`` and ``RequestDisk``) come from
    these. Names that vary per proc (``$(Item)``) are left out and count 0."""
    return {path: file_kib(path) for path in _measured_paths(text, cwd=cwd, environ=environ)}


def _measured_paths(text: str, *, cwd: str, environ: Mapping[str, str]) -> tuple[str, ...]:
    """The files :func:`measured_sizes` measures, each once, at most :data:`MAX_MEASURED_FILES`."""
    description = parse_description(text, cwd=cwd, predefined=host_predefined(), environ=environ)
    here = os.path.abspath(cwd)
    context = BuildContext(here, None, environ, host_predefined())
    paths: dict[str, None] = {}
    for statement in queue_statements(description):
        per_proc = {name.lower(): _PER_PROC for name in parse_statement(statement, context).variables}
        scope = MacroScope({k: c.value for k, c in statement.commands.items()}, items=per_proc,
                           live=dict.fromkeys(_LIVE_MACROS, _PER_PROC), predefined=host_predefined(),
                           cwd=here, environ=environ)
        iwd = os.path.join(here, _fixed_value(scope, "initialdir") or _fixed_value(scope, "initial_dir") or "")
        named = [(here, _fixed_value(scope, "executable")), (iwd, _fixed_value(scope, "input"))]
        named += [(iwd, name) for name in file_list(_fixed_value(scope, "transfer_input_files"))]
        for base, name in named:
            if name and "://" not in name and len(paths) < MAX_MEASURED_FILES:
                paths[os.path.join(base, name)] = None
    return tuple(paths)


#: What a macro that differs from proc to proc stands for while measuring.
_PER_PROC = "\x00per-proc\x00"
_LIVE_MACROS = ("cluster", "clusterid", "process", "procid", "step", "jobid", "node", "itemindex", "row")


def _fixed_value(scope: MacroScope, name: str) -> str | None:
    """A command's value when it is the same for every proc, else None."""
    try:
        value = scope.value(name)
    except SubmitError:
        return None
    if value is None or _PER_PROC in value:
        return None
    return value.strip()


def reads_environ(text: str) -> bool:
    """Whether the schedd may read the submitter's environment to expand ``text``
    (``getenv``, and ``use_scitokens`` for ``BEARER_TOKEN_FILE``); a description that
    names neither is sent without it."""
    return _READS_ENVIRON.search(text) is not None


__all__ = ["for_schedd", "measured_sizes", "prepared_for_schedd", "reads_environ"]
