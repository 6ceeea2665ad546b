"""The Requirements expression condor_submit builds around the user's own."""

from __future__ import annotations

import re

from schedd.submit.gpus import is_share_job
from schedd.submit.grid import grid_type
from schedd.submit.values import Expr, literal, to_value

_VERSION_CHECK = 'versioncmp(split(TARGET.CondorVersion)[1],"8.9.7") >= 0'
_DEFERRAL = ("TARGET.HasJobDeferral && (((time() + ScheddInterval) >= (DeferralTime - "
             "DeferralPrepTime)) && (time() < (DeferralTime + DeferralWindow)))")
#: The tokens submit's own Requirements clauses are written with: dotted names, whole
#: numbers, double-quoted words, comparisons, ``&&``/``||``, calls, indexing and parentheses.
_BUILT_TOKENS = re.compile(r'\s*(?:([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)|\d+|"[\w.+-]*"|>=|<=|==|&&|\|\||[()\[\],])')
#: Words that are ClassAd keywords, not names.
_KEYWORDS = frozenset({"true", "false", "undefined", "error", "is", "isnt"})


def requirements_value(r, universe: str) -> object:
    """The Requirements attribute's value: :func:`default_requirements` as :func:`to_value` makes it.

    A text with the user's ``requirements`` in it goes through the parser's check. One
    built from submit's own clauses alone is well formed by construction, as long as each
    name and word written into a clause (host arch and opsys, custom request names,
    transfer plugin methods) is a plain one; when every token is, the check is skipped,
    so that expanding the common description needs no ClassAd parser on the client.

    Raises:
        SubmitError: the text does not parse (naming ``requirements``).
    """
    text = default_requirements(r, universe)
    if (r.get("requirements") or "").strip() or not _plain_tokens(text) or literal(text)[0]:
        return to_value(text, "requirements")
    return Expr(text.strip())


def _plain_tokens(text: str) -> bool:
    """Whether ``text`` is wholly made of :data:`_BUILT_TOKENS`, no name being a keyword."""
    at, end = 0, len(text.rstrip())
    while at < end:
        found = _BUILT_TOKENS.match(text, at)
        if found is None or found.end() == at:
            return False
        name = found.group(1)
        if name is not None and any(part.lower() in _KEYWORDS for part in name.split(".")):
            return False
        at = found.end()
    return True


def mentions(text: str, pattern: str) -> bool:
    return re.search(r"(?<![\w$])(?:TARGET\.)?" + pattern + r"(?![\w])", text, re.I) is not None


def _is_literal_at_most(value: object, limit: float) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value <= limit


def host_arch(r) -> str:
    return r.context.predefined.get("arch", "X86_64")


def host_opsys(r) -> str:
    return r.context.predefined.get("opsys", "LINUX")


def default_requirements(r, universe: str) -> str:
    """The Requirements text for this job (``r`` is the rule reader)."""
    user = (r.get("requirements") or "").strip()
    if universe == "grid" and grid_type(r) != "condor":
        return f"({user})" if user else "TRUE"
    clauses: list[str] = []
    if user:
        clauses.append(f"({user})")
    clauses += _platform(r, universe, user)
    clauses += _resources(r, universe)
    if r.attr("EncryptExecuteDirectory") is True:
        clauses.append("TARGET.HasEncryptExecuteDirectory")
    files = _file_clause(r, universe, user)
    if files:
        clauses.append(files)
    if r.get("transfer_checkpoint_files"):
        clauses.append("TARGET.HasSelfCheckpointTransfers")
    if r.attr("ScheddInterval") is not None:
        clauses.append(_DEFERRAL)
    if r.attr("CUDAVersion") is not None:
        clauses.append("CUDAVersion <= TARGET.CUDAMaxSupportedVersion")
    return " && ".join(clauses)


def _platform(r, universe: str, user: str) -> list[str]:
    if universe == "java":
        return ["TARGET.HasJava"]
    clauses = []
    if not mentions(user, "Arch"):
        clauses.append(f'(TARGET.Arch == "{host_arch(r)}")')
    if universe == "docker":
        clauses.append("TARGET.HasDocker")
        network = (r.attr("DockerNetworkType") or "").lower()
        if network and network not in ("none", "host"):
            clauses.append("StringListMember(My.DockerNetworkType,TARGET.DockerNetworks)")
    elif universe == "container":
        clauses.append("TARGET.HasContainer")
        for want, has in (("WantDockerImage", "TARGET.HasDockerURL"), ("WantSIF", "TARGET.HasSIF"),
                          ("WantSandboxImage", "TARGET.HasSandboxImage")):
            if r.attr(want):
                clauses.append(has)
    elif universe == "vm":
        clauses += ["(TARGET.HasVM is true)", "(TARGET.VM_Type == MY.JobVMType)",
                    "(TARGET.VM_AvailNum > 0)"]
    elif not mentions(user, r"OpSys\w*"):
        clauses.append(f'(TARGET.OpSys == "{host_opsys(r)}")')
    return clauses


def _resources(r, universe: str) -> list[str]:
    clauses = []
    if not _is_literal_at_most(r.attr("RequestDisk"), 0):
        clauses.append("(TARGET.Disk >= RequestDisk)")
    if universe == "vm":
        clauses += ["(TARGET.TotalMemory >= MY.JobVMMemory)", "(TARGET.VM_Memory >= MY.JobVMMemory)"]
    elif not _is_literal_at_most(r.attr("RequestMemory"), 1):
        clauses.append("(TARGET.Memory >= RequestMemory)")
    cpus = r.attr("RequestCpus")
    if isinstance(cpus, Expr) or not _is_literal_at_most(cpus, 1):
        clauses.append("(TARGET.Cpus >= RequestCpus)")
    gpus = r.attr("RequestGPUs")
    if gpus is not None and not _is_literal_at_most(gpus, 0):
        if r.attr("RequireGPUs") is not None:
            clauses.append("(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)")
        elif not is_share_job(r):
            clauses.append("(TARGET.GPUs >= RequestGPUs)")
    from schedd.submit.jobad import custom_requests

    for key in custom_requests(r):
        name = r.line_of(key).name[len("request_"):]
        value = r.attr("Request" + name)
        if value is not None and not _is_literal_at_most(value, 0):
            clauses.append(f"(TARGET.{name} >= Request{name})")
    return clauses


def _file_clause(r, universe: str, user: str) -> str | None:
    if universe in ("local", "scheduler", "grid") or mentions(user, "HasFileTransfer"):
        return None
    should = r.attr("ShouldTransferFiles")
    if should == "NO":
        return "(TARGET.FileSystemDomain == MY.FileSystemDomain)"
    base = "TARGET.HasJobTransferPlugins" if r.get("transfer_plugins") else "TARGET.HasFileTransfer"
    extras = [base]
    if (r.attr("WhenToTransferOutput") == "ON_SUCCESS" or r.attr("PreserveRelativePaths") is True
            or r.get("transfer_checkpoint_files")):
        extras.append(_VERSION_CHECK)
    if any(r.attr(a) for a in ("EncryptInputFiles", "EncryptOutputFiles",
                                "DontEncryptInputFiles", "DontEncryptOutputFiles")):
        extras.append("TARGET.HasPerFileEncryption")
    methods = r.attr("WantTransferPluginMethods")
    if methods:
        extras += [f'stringListIMember("{m}",TARGET.HasFileTransferPluginMethods)'
                   for m in methods.split(",")]
    transfer = "(" + " && ".join(extras) + ")"
    if should == "YES":
        return transfer
    return f"((TARGET.FileSystemDomain == MY.FileSystemDomain) || {transfer})"
