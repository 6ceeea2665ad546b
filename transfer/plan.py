"""What a job transfers, read from its ad: the input plan (executable, stdin,
``TransferInput`` files, directories and URLs) and the output plan
(``TransferOutput`` or new files, stdout/stderr, ``TransferOutputRemaps``,
``OutputDestination``). Pure: nothing here touches the file system.

Names follow HTCondor: inputs land in the sandbox under their base names, a
directory written with a trailing slash sends only its contents, and outputs come
back to ``Iwd`` under their base names unless remapped.
"""

from __future__ import annotations

import posixpath
import re
from typing import Iterable
from urllib.parse import unquote, urlsplit

from attrs import frozen

import classad
from classad.values import Value
from transfer.errors import BadTransferPathError

#: Sandbox names the starter writes the job's stdout and stderr to.
STDOUT_NAME = "_condor_stdout"
STDERR_NAME = "_condor_stderr"
#: Sandbox names the starter writes the job's and the machine's ads to (``_CONDOR_JOB_AD``,
#: ``_CONDOR_MACHINE_AD``); like the streams, they never come back as new files.
JOB_AD_NAME = ".job.ad"
MACHINE_AD_NAME = ".machine.ad"
#: the contact file of a gang's piece (startd.gang_environment), never sent back
CONTACT_NAME = ".gang_contact"
STARTER_NAMES = frozenset({STDOUT_NAME, STDERR_NAME, JOB_AD_NAME, MACHINE_AD_NAME, CONTACT_NAME})

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_NULL_DEVICE = "/dev/null"


@frozen
class InputFile:
    """A file or directory on the submit side and the sandbox name it lands under;
    ``contents_only`` (a trailing slash) puts a directory's contents at ``name``."""

    source: str
    name: str
    contents_only: bool = False


@frozen
class UrlInput:
    """A URL the execute side fetches straight into the sandbox as ``name``."""

    url: str
    name: str


@frozen
class InputPlan:
    """Everything a job needs in its sandbox before it starts."""

    job: str
    iwd: str
    files: tuple[InputFile, ...]
    urls: tuple[UrlInput, ...]
    executable: str | None
    stdin: str | None

    @property
    def schemes(self) -> frozenset[str]:
        """The URL schemes the inputs use, lower case."""
        return frozenset(url_scheme(u.url) for u in self.urls)


@frozen
class OutputFile:
    """A sandbox-relative file or directory the job asked to have sent back."""

    name: str
    contents_only: bool = False


@frozen
class OutputPlan:
    """What comes back from the sandbox and where each file goes. ``files`` is None
    when ``TransferOutput`` is unset: then every new or changed top-level file."""

    job: str
    iwd: str
    files: tuple[OutputFile, ...] | None
    stdout: str | None
    stderr: str | None
    remaps: tuple[tuple[str, str], ...] = ()
    destination: str | None = None
    preserve_relative_paths: bool = False

    def transfer_name(self, sandbox_name: str) -> str:
        """The name a sandbox file travels under: its base name, or its whole
        relative path with ``preserve_relative_paths``."""
        return sandbox_name if self.preserve_relative_paths else posixpath.basename(sandbox_name)

    def target(self, name: str) -> str | None:
        """Where the output travelling as ``name`` goes: an absolute path on the submit
        side or a URL; None for a stream the job did not ask for."""
        if name == STDOUT_NAME:
            return self.stdout
        if name == STDERR_NAME:
            return self.stderr
        remap = dict(self.remaps).get(name)
        if remap is not None:
            return remap if is_url(remap) else posixpath.normpath(posixpath.join(self.iwd, remap))
        if self.destination is not None:
            return self.destination.rstrip("/") + "/" + name
        return posixpath.join(self.iwd, name)


def is_url(text: str) -> bool:
    """Whether a transfer list entry is a URL (``scheme://...``) rather than a path."""
    return bool(_URL.match(text))


def url_scheme(url: str) -> str:
    """The scheme of ``url``, lower case."""
    return url.split("://", 1)[0].lower()


def job_name(ad: classad.ClassAd) -> str:
    """``ClusterId.ProcId`` of the job, for messages."""
    return f"{_value(ad, 'ClusterId', '?')}.{_value(ad, 'ProcId', '?')}"


def input_plan(ad: classad.ClassAd) -> InputPlan:
    """The input plan of a job ad.

    Raises:
        BadTransferPathError: a name is empty, a URL has no file name, two inputs
            land under one name, or ``Iwd`` is missing while a path is relative.
    """
    job = job_name(ad)
    iwd = string_attr(ad, "Iwd") or ""
    preserve = _value(ad, "PreserveRelativePaths", False) is True
    files: list[InputFile] = []
    executable = None
    cmd = string_attr(ad, "Cmd")
    if cmd and _value(ad, "TransferExecutable", True) is not False:
        executable = posixpath.basename(cmd)
        files.append(InputFile(_absolute(job, iwd, cmd, "Cmd"), executable))
    stdin = None
    stdin_path = string_attr(ad, "In")
    if stdin_path and stdin_path != _NULL_DEVICE and _value(ad, "StreamIn", False) is not True:
        stdin = posixpath.basename(stdin_path)
        files.append(InputFile(_absolute(job, iwd, stdin_path, "In"), stdin))
    urls: list[UrlInput] = []
    for entry in split_list(string_attr(ad, "TransferInput") or ""):
        if is_url(entry):
            urls.append(UrlInput(entry, _url_file_name(job, entry)))
        else:
            files.append(_input_entry(job, iwd, entry, preserve))
    _check_unique(job, [f.name for f in files if f.name] + [u.name for u in urls])
    return InputPlan(job, iwd, tuple(files), tuple(urls), executable, stdin)


def output_plan(ad: classad.ClassAd) -> OutputPlan:
    """The output plan of a job ad.

    Raises:
        BadTransferPathError: a listed name is absolute or climbs out of the sandbox,
            or a remap entry is malformed.
    """
    job = job_name(ad)
    iwd = string_attr(ad, "Iwd") or ""
    listed = string_attr(ad, "TransferOutput")
    files = None
    if listed is not None:
        files = tuple(_output_entry(job, entry) for entry in split_list(listed))
    remaps = tuple(parse_remaps(job, string_attr(ad, "TransferOutputRemaps") or ""))
    destination = string_attr(ad, "OutputDestination") or None
    return OutputPlan(
        job, iwd, files,
        stdout=_stream_target(ad, job, iwd, "Out", "StreamOut"),
        stderr=_stream_target(ad, job, iwd, "Err", "StreamErr"),
        remaps=remaps, destination=destination,
        preserve_relative_paths=_value(ad, "PreserveRelativePaths", False) is True)


def split_list(text: str) -> list[str]:
    """The entries of a comma-separated transfer list, blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_remaps(job: str, text: str) -> list[tuple[str, str]]:
    """``name = target; name2 = target2`` as pairs; a backslash escapes ``=``, ``;``
    and itself, as in HTCondor's ``transfer_output_remaps``.

    Raises:
        BadTransferPathError: an entry has no ``=``, an empty side, or a name that
            escapes the sandbox.
    """
    pairs = []
    for entry in _split_unescaped(text, ";"):
        if not entry.strip():
            continue
        sides = _split_unescaped(entry, "=", maxsplit=1)
        if len(sides) != 2 or not sides[0].strip() or not sides[1].strip():
            raise BadTransferPathError(
                f"job {job}: TransferOutputRemaps entry {entry.strip()!r} is not 'name = target'")
        name, target = (_unescape(side.strip()) for side in sides)
        pairs.append((check_sandbox_name(job, name, "TransferOutputRemaps"), target))
    return pairs


def check_sandbox_name(job: str, name: str, what: str) -> str:
    """``name`` normalised, if it stays inside the sandbox.

    Raises:
        BadTransferPathError: it is empty, absolute, holds a NUL or climbs with ``..``.
    """
    if not name or "\0" in name:
        raise BadTransferPathError(f"job {job}: {what} has an empty or malformed file name {name!r}")
    if posixpath.isabs(name):
        raise BadTransferPathError(
            f"job {job}: {what} names {name!r}, an absolute path; sandbox names must be relative")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise BadTransferPathError(f"job {job}: {what} names {name!r}, which climbs out of the sandbox")
    if not parts:
        raise BadTransferPathError(f"job {job}: {what} names {name!r}, the sandbox itself")
    return "/".join(parts)


def _input_entry(job: str, iwd: str, entry: str, preserve: bool) -> InputFile:
    contents_only = entry.endswith("/") and not preserve
    source = _absolute(job, iwd, entry, "TransferInput")
    if contents_only:
        return InputFile(source, "", contents_only=True)
    if preserve and not posixpath.isabs(entry):
        return InputFile(source, check_sandbox_name(job, entry, "TransferInput"))
    return InputFile(source, check_sandbox_name(job, posixpath.basename(source), "TransferInput"))


def _output_entry(job: str, entry: str) -> OutputFile:
    name = check_sandbox_name(job, entry, "TransferOutput")
    return OutputFile(name, contents_only=entry.endswith("/"))


def _stream_target(ad: classad.ClassAd, job: str, iwd: str, attr: str, stream_attr: str) -> str | None:
    path = string_attr(ad, attr)
    if not path or path == _NULL_DEVICE or _value(ad, stream_attr, False) is True:
        return None
    return _absolute(job, iwd, path, attr)


def _absolute(job: str, iwd: str, path: str, what: str) -> str:
    if "\0" in path:
        raise BadTransferPathError(f"job {job}: {what} holds a NUL byte: {path!r}")
    if posixpath.isabs(path):
        return posixpath.normpath(path)
    if not iwd:
        raise BadTransferPathError(f"job {job}: {what} {path!r} is relative but the job has no Iwd")
    return posixpath.normpath(posixpath.join(iwd, path))


def _url_file_name(job: str, url: str) -> str:
    path = unquote(urlsplit(url).path)
    name = posixpath.basename(path)
    if not name or name in (".", ".."):
        raise BadTransferPathError(
            f"job {job}: TransferInput URL {url!r} names no file (it ends in '/'); "
            "whole buckets or directories cannot be fetched")
    return check_sandbox_name(job, name, "TransferInput")


def _check_unique(job: str, names: Iterable[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise BadTransferPathError(
                f"job {job}: two inputs land in the sandbox as {name!r}; rename one of them")
        seen.add(name)


def _split_unescaped(text: str, separator: str, maxsplit: int = -1) -> list[str]:
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator and maxsplit != 0:
            parts.append("".join(current))
            current = []
            maxsplit -= 1
        else:
            current.append(char)
    if escaped:
        current.append("\\")
    parts.append("".join(current))
    return parts


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _value(ad: classad.ClassAd, attr: str, default):
    if attr not in ad:
        return default
    try:
        value = ad.eval(attr)
    except Exception:
        return default
    return default if isinstance(value, Value) else value


def string_attr(ad: classad.ClassAd, attr: str) -> str | None:
    """The string value of ``attr``, or None when it is missing or not a string."""
    value = _value(ad, attr, None)
    return value if isinstance(value, str) else None
