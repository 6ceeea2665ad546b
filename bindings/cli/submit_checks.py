"""What ``roost submit`` checks on the submitting machine before it sends anything,
as condor_submit does (src/condor_utils/submit_utils.cpp, ``SetExecutable``,
``SetStdin``, ``SetTransferFiles``, ``SetUserLog`` and their ``check_open`` calls;
src/condor_submit.V6/submit.cpp for the unused-command warning):

- the executable must exist when it is transferred, and a ``#!`` script whose first
  line ends in CRLF is refused with a dos2unix hint (``-allow-crlf-script`` allows it);
- ``input`` and every local ``transfer_input_files`` entry must exist (relative to ``Iwd``);
- the ``log`` must be a file this user can write, or creatable ("Invalid log file");
- ``skip_filechecks = true`` turns the file checks off;
- a command that is no submit command and that no ``$(...)`` refers to had no effect:
  it is warned about, with the closest submit command when one is near.

Pure logic over job ads (or a description's expansion, read through :class:`ExpandedJob`
without loading the ClassAd library) and the parsed description; the caller prints and decides.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Union

from schedd.submit.cluster import ExpandedCluster
from schedd.submit.description import Description
from schedd.submit.jobs import KNOWN_COMMANDS

if TYPE_CHECKING:
    import classad

    JobView = Union["ExpandedJob", classad.ClassAd]

#: At most this many problems are reported (one per distinct file).
MAX_PROBLEMS = 20
#: How much of a script is read to find its first line.
FIRST_LINE_BYTES = 4096
_MACRO_REFERENCE = re.compile(r"\$[A-Za-z]*\(\s*([A-Za-z0-9_.+-]+)")
#: Values an expanded job holds as the ClassAd would evaluate them.
_PLAIN = (str, bool)


class ExpandedJob:
    """One proc of an expanded description, read as the checks read its job ad: a
    string or boolean attribute as it is, any other (an expression) evaluated in the
    proc's ClassAd, which is built (and the ClassAd library loaded) only then."""

    def __init__(self, attributes: Mapping[str, tuple[str, object]]) -> None:
        #: lower-case name -> (name, submit value), as :meth:`ExpandedCluster.proc_attrs` gives them
        self._attributes = attributes
        self._ad: classad.ClassAd | None = None

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._attributes

    def evaluate(self, name: str) -> object:
        """The attribute's value, as ``ClassAd.evaluate`` gives it."""
        value = self._attributes[name.lower()][1]
        if type(value) in _PLAIN:
            return value
        if self._ad is None:
            from schedd.submit.exprs import ClassAd
            from schedd.submit.jobs import classad_node

            self._ad = ClassAd.from_entries((entry, classad_node(v)) for entry, v in self._attributes.values())
        return self._ad.evaluate(name)


def expanded_jobs(clusters: Iterable[ExpandedCluster]) -> Iterator[ExpandedJob]:
    """Each proc of an expansion (:meth:`bindings.submit.Submit.clusters`), in order, as the checks read it."""
    for cluster in clusters:
        for index in range(len(cluster.procs)):
            yield ExpandedJob(cluster.proc_attrs(index))


def _value(ad: JobView, name: str) -> object:
    return ad.evaluate(name) if name in ad else None


def _in_iwd(ad: JobView, path: str) -> str:
    iwd = _value(ad, "Iwd")
    return path if os.path.isabs(path) or type(iwd) is not str else os.path.join(iwd, path)


def executable_problem(ad: JobView, allow_crlf: bool = False) -> str | None:
    """Why the job's transferred executable cannot run, or None."""
    cmd = _value(ad, "Cmd")
    if _value(ad, "TransferExecutable") is False or type(cmd) is not str or not cmd:
        return None
    if not os.path.exists(cmd):
        return f"executable file '{cmd}' does not exist"
    if os.path.isdir(cmd):
        return f"executable '{cmd}' is a directory, not a program"
    try:
        with open(cmd, "rb") as handle:
            head = handle.read(FIRST_LINE_BYTES)
    except OSError as exc:
        return f"executable file '{cmd}' cannot be read: {exc.strerror}"
    first_line = head.split(b"\n", 1)[0]
    if not allow_crlf and head.startswith(b"#!") and b"\n" in head and first_line.endswith(b"\r"):
        return (f"executable file '{cmd}' is a script with CRLF (DOS/Windows) line endings, which the "
                f"system cannot run; convert it with 'dos2unix {cmd}' (or a similar tool) and submit "
                "again, or pass -allow-crlf-script")
    return None


def input_problems(ad: JobView) -> list[str]:
    """Each input of the job (``input``, local ``transfer_input_files``) that does not exist."""
    problems = []
    stdin = _value(ad, "In")
    if type(stdin) is str and stdin and stdin != "/dev/null" and _value(ad, "TransferIn") is not False:
        path = _in_iwd(ad, stdin)
        if not os.path.isfile(path):
            problems.append(f"input file '{path}' does not exist" if not os.path.exists(path)
                            else f"input '{path}' is not a file")
    listed = _value(ad, "TransferInput")
    for name in (listed.split(",") if type(listed) is str else []):
        name = name.strip()
        if name and "://" not in name and not os.path.exists(_in_iwd(ad, name.rstrip("/") or "/")):
            problems.append(f"transfer_input_files names '{_in_iwd(ad, name)}', which does not exist")
    return problems


def log_problem(ad: JobView) -> str | None:
    """Why the job's event log (``UserLog``) cannot be written, or None; nothing is created."""
    log = _value(ad, "UserLog")
    if type(log) is not str or not log:
        return None
    path = _in_iwd(ad, log)
    if os.path.isdir(path):
        reason = "it is a directory"
    elif os.path.exists(path):
        reason = None if os.access(path, os.W_OK) else "it is not writable by you"
    else:
        folder = os.path.dirname(path) or "."
        reason = (f"its directory {folder} does not exist" if not os.path.isdir(folder)
                  else None if os.access(folder, os.W_OK | os.X_OK)
                  else f"its directory {folder} is not writable by you")
    return None if reason is None else f"Invalid log file '{path}': {reason}"


def file_problems(ads: Iterable[JobView], allow_crlf: bool = False) -> list[str]:
    """Every distinct problem with the files the jobs need, in proc order, at most :data:`MAX_PROBLEMS`."""
    found: dict[str, None] = {}
    for ad in ads:
        for problem in (executable_problem(ad, allow_crlf), *input_problems(ad), log_problem(ad)):
            if problem is not None:
                found.setdefault(problem)
        if len(found) >= MAX_PROBLEMS:
            break
    return list(found)[:MAX_PROBLEMS]


def _referenced(description: Description) -> set[str]:
    texts = [c.value for c in description.commands.values()]
    for statement in description.queues:
        texts.append(statement.args)
        texts += [c.value for c in statement.commands.values()]
    return {name.lower() for text in texts for name in _MACRO_REFERENCE.findall(text)}


def _is_used(key: str) -> bool:
    return key in KNOWN_COMMANDS or key.startswith(("my.", "+", "request_")) or "." in key


def unused_commands(description: Description) -> list[str]:
    """A warning for each command that is no submit command and that nothing refers to
    as a macro (HTCondor: "was unused by condor_submit"), with a near submit command."""
    referenced = _referenced(description)
    commands = dict(description.commands)
    for statement in description.queues:
        commands.update({k: c for k, c in statement.commands.items() if k not in commands})
    warnings = []
    for key, command in commands.items():
        if _is_used(key) or key in referenced:
            continue
        where = f"{command.file or '<submit description>'}, line {command.line}"
        close = difflib.get_close_matches(key, sorted(KNOWN_COMMANDS), n=1, cutoff=0.75)
        hint = f"; did you mean '{close[0]}'?" if close else "; is it a typo?"
        warnings.append(f"{where}: '{command.name} = {command.value}' is not a submit command and nothing "
                        f"refers to it as $({command.name}), so it changed nothing{hint}")
    return warnings


__all__ = ["ExpandedJob", "executable_problem", "expanded_jobs", "file_problems", "input_problems", "log_problem", "unused_commands"]
