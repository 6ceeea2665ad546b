"""The GPU submit commands: HTCondor's whole-card ones (``request_gpus``, ``require_gpus``,
``gpus_minimum_memory`` ...) and the share ones (``request_gpu_memory``, ``gpu_placement``,
``use_gpu_uuids`` ...), each checked at submit time so a bad value is refused naming its
command instead of leaving a job no machine can ever run."""

from __future__ import annotations

import re
import warnings

from gpushare.placement import POLICY_WORDS
from schedd.submit.cluster import RuleReader
from schedd.submit.errors import SubmitError, SubmitWarning
from schedd.submit.values import Expr, check_expression, size_value, string_value, to_value

MIB = 1 << 20

#: share commands: any of them makes the job a share job (RequestGPUs = 1 when not given)
SHARE_COMMANDS = {"request_gpu_memory": "RequestGPUMemory",
                  "request_gpu_memory_percent": "RequestGPUMemoryPercent",
                  "request_gpu_cores": "RequestGPUCores"}
#: job attributes that make a job a share job
SHARE_ATTRIBUTES = tuple(SHARE_COMMANDS.values())
#: where on a machine, and on which machine, the job's cards go
PLACEMENT_COMMANDS = {"gpu_placement": "GPUPlacementPolicy", "gpu_numa_bind": "GPUNumaBind",
                      "use_gpu_uuids": "RequestGPUIds", "avoid_gpu_uuids": "AvoidGPUIds",
                      "use_gpu_types": "RequestGPUTypes", "avoid_gpu_types": "AvoidGPUTypes",
                      "node_placement": "NodePlacementPolicy"}
#: HTCondor's constraints on whole cards: command, attribute, the GPU property its
#: clause of RequireGPUs tests, and that clause
CARD_CONSTRAINTS = (
    ("gpus_minimum_capability", "GPUsMinCapability", "Capability", "Capability >= GPUsMinCapability"),
    ("gpus_maximum_capability", "GPUsMaxCapability", "Capability", "Capability <= GPUsMaxCapability"),
    ("gpus_minimum_memory", "GPUsMinMemory", "GlobalMemoryMb", "GlobalMemoryMb >= GPUsMinMemory"),
    ("gpus_maximum_memory", "GPUsMaxMemory", "GlobalMemoryMb", "GlobalMemoryMb <= GPUsMaxMemory"),
    ("gpus_minimum_runtime", "GPUsMinRuntime", "MaxSupportedVersion",
     "MaxSupportedVersion >= GPUsMinRuntime"))
#: every GPU command this module reads
GPU_COMMANDS = ("request_gpus", "require_gpus", "cuda_version", *SHARE_COMMANDS, *PLACEMENT_COMMANDS,
                *(constraint[0] for constraint in CARD_CONSTRAINTS))

NODE_POLICY_WORDS = ("binpack", "spread")
#: the largest share a job may ask for on one card (1 PiB, in MiB)
MAX_CARD_MEMORY_MIB = 1 << 30
#: bounds on the id and type lists a job may give
MAX_LIST_ITEMS, MAX_ITEM_LENGTH = 64, 128
_CARD_ID = re.compile(r"^(?:(?:GPU|MIG)-[0-9A-Fa-f][0-9A-Fa-f-]*|\d+)$")
_CARD_TYPE = re.compile(r"^[\w .+/()-]+$")
_WORDS = {"true": True, "yes": True, "false": False, "no": False}


def fail(message: str, command: str) -> SubmitError:
    return SubmitError(message, command=command)


def gpus(r: RuleReader) -> None:
    """RequestGPUs, the share and placement attributes, and HTCondor's RequireGPUs."""
    share = share_attributes(r)
    placement = placement_attributes(r)
    count = gpu_count(r, share)
    if count is None:
        _warn_unused_placement(placement)
        return
    r["RequestGPUs"] = count
    if isinstance(count, (int, float)) and count <= 0:
        if share:
            raise fail(f"asks for a share of a GPU but request_gpus = {count}; remove one of them",
                       next(c for c, a in SHARE_COMMANDS.items() if a in share))
        return
    for attr, value in {**share, **placement}.items():
        r[attr] = value
    card_constraints(r)


def gpu_count(r: RuleReader, share: dict[str, object]) -> object:
    """RequestGPUs: request_gpus as written (a fraction refused), 1 for a share job
    without it, None for a job asking for no GPU."""
    text = r.get("request_gpus")
    if not text or not text.strip():
        return 1 if share else None
    count = to_value(text, "request_gpus")
    if isinstance(count, bool) or isinstance(count, str):
        raise fail(f"{text.strip()!r} is not a number of GPUs", "request_gpus")
    if isinstance(count, float) and not count.is_integer():
        raise fail(f"{text.strip()} is not a whole number of GPUs; to share a card, keep request_gpus = 1 "
                   f"and ask for part of it with request_gpu_memory_percent = {_percent_hint(count)} "
                   "(or request_gpu_memory / request_gpu_cores)", "request_gpus")
    return count


def _percent_hint(count: float) -> int:
    return min(100, max(1, round((count % 1) * 100)))


def share_attributes(r: RuleReader) -> dict[str, object]:
    """The share attributes the description gives, checked."""
    share: dict[str, object] = {}
    memory = _given(r, "request_gpu_memory")
    if memory is not None:
        share["RequestGPUMemory"] = card_memory_mib(memory, "request_gpu_memory")
    percent = _given(r, "request_gpu_memory_percent")
    if percent is not None:
        share["RequestGPUMemoryPercent"] = bounded_integer(percent, 1, 100, "request_gpu_memory_percent")
    if memory is not None and percent is not None:
        raise fail("give request_gpu_memory or request_gpu_memory_percent, not both",
                   "request_gpu_memory_percent")
    cores = _given(r, "request_gpu_cores")
    if cores is not None:
        share["RequestGPUCores"] = bounded_integer(cores, 0, 100, "request_gpu_cores")
    return share


def placement_attributes(r: RuleReader) -> dict[str, object]:
    """The placement attributes the description gives, checked."""
    found: dict[str, object] = {}
    placement = _given(r, "gpu_placement")
    if placement is not None:
        found["GPUPlacementPolicy"] = policy_words(placement, POLICY_WORDS, "gpu_placement")
    bind = _given(r, "gpu_numa_bind")
    if bind is not None:
        found["GPUNumaBind"] = boolean(bind, "gpu_numa_bind")
    for command, pattern, what in (("use_gpu_uuids", _CARD_ID, "a GPU UUID, short id or index"),
                                   ("avoid_gpu_uuids", _CARD_ID, "a GPU UUID, short id or index"),
                                   ("use_gpu_types", _CARD_TYPE, "part of a GPU's DeviceName"),
                                   ("avoid_gpu_types", _CARD_TYPE, "part of a GPU's DeviceName")):
        text = _given(r, command)
        if text is not None:
            found[PLACEMENT_COMMANDS[command]] = ",".join(card_list(text, pattern, what, command))
    _refuse_overlap(found, "RequestGPUIds", "AvoidGPUIds", "use_gpu_uuids", "avoid_gpu_uuids")
    _refuse_overlap(found, "RequestGPUTypes", "AvoidGPUTypes", "use_gpu_types", "avoid_gpu_types")
    node = _given(r, "node_placement")
    if node is not None:
        found["NodePlacementPolicy"] = policy_words(node, NODE_POLICY_WORDS, "node_placement", chain=False)
    return found


def card_constraints(r: RuleReader) -> None:
    """RequireGPUs as SubmitHash::SetResourceRequirements builds it: require_gpus as written,
    then ``&&`` the clause of each gpus_minimum_/maximum_ command given, except where
    require_gpus already tests that GPU property itself (a ``||`` in require_gpus is
    parenthesised first); and CUDAVersion."""
    from schedd.submit.exprs import binds_looser_than_and, own_references  # the parser, only when asked

    require = _given(r, "require_gpus")
    clauses = []
    tested = own_references(require.strip()) if require and check_expression(require.strip()) is None else set()
    for command, attr, prop, clause in CARD_CONSTRAINTS:
        value = _given(r, command)
        if value is None:
            continue
        r[attr] = constraint_value(value, command)
        if prop.lower() not in tested:
            clauses.append(clause)
    if require is not None:
        text = require.strip()
        to_value(text, "require_gpus")
        if clauses and binds_looser_than_and(text):
            text = f"({text})"
        clauses.insert(0, text)
    if clauses:
        r["RequireGPUs"] = to_value(" && ".join(clauses), "require_gpus")
    cuda = r.get("cuda_version")
    if cuda and cuda.strip():
        r["CUDAVersion"] = version_number(cuda, 1, "cuda_version")


def constraint_value(text: str, command: str) -> object:
    """A gpus_minimum_/maximum_ value: memory in MiB (``8G`` is 8192), a runtime in
    HTCondor's integer form (:func:`runtime_version`), a capability as written."""
    if command.endswith("memory"):
        return size_value(text, MIB, command)
    if command.endswith("runtime"):
        return runtime_version(text, command)
    return to_value(text, command)


def runtime_version(text: str, command: str) -> object:
    """gpus_minimum_runtime as SubmitHash::SetRequestGpus reads it: ``12.1`` is 12010
    (major*1000 + minor*10, minor below 100), a bare number above 1000 is already in
    that form (``12010``), a bare small number is a major version (``12`` is 12000);
    anything else stays an expression."""
    m = re.fullmatch(r"(\d{1,9})(?:\.(\d{1,9}))?", text.strip())
    if not m or (m.group(2) is not None and int(m.group(2)) >= 100):
        return to_value(text, command)
    major = int(m.group(1))
    if m.group(2) is None and major > 1000:
        return major
    return major * 1000 + int(m.group(2) or 0) * 10


def version_number(text: str, minor_scale: int, command: str) -> object:
    """``11.2`` as HTCondor's integer versions: major*1000 + minor*scale."""
    t = text.strip()
    m = re.match(r"^(\d+)(?:\.(\d+))?$", t)
    if not m:
        return to_value(t, command)
    return int(m.group(1)) * 1000 + int(m.group(2) or 0) * minor_scale


def is_share_job(r: RuleReader) -> bool:
    """True when the job asks for part of a card rather than whole cards."""
    return any(r.attr(attr) is not None for attr in SHARE_ATTRIBUTES)


def card_memory_mib(text: str, command: str) -> int:
    """GPU memory per card in MiB: ``10G``, ``512M``, ``1T``, or a plain number of MiB."""
    value = size_value(text, MIB, command)
    if isinstance(value, Expr) or isinstance(value, (bool, str)) or not isinstance(value, (int, float)):
        raise fail(f"{text.strip()!r} is not an amount of GPU memory; use MiB or a number with "
                   "M, G or T (10G, 512M)", command)
    if value < 1:
        raise fail(f"{text.strip()} is no GPU memory; ask for at least 1 MiB", command)
    if value > MAX_CARD_MEMORY_MIB:
        raise fail(f"{text.strip()} is more GPU memory than any card has (at most "
                   f"{MAX_CARD_MEMORY_MIB} MiB)", command)
    return int(value)


def bounded_integer(text: str, low: int, high: int, command: str) -> int:
    t = string_value(text)
    if not re.fullmatch(r"[+-]?\d{1,12}", t):
        raise fail(f"{t!r} is not a whole number from {low} to {high}", command)
    value = int(t)
    if not low <= value <= high:
        raise fail(f"{value} is outside {low}..{high} (a percentage of the card)", command)
    return value


def policy_words(text: str, known: tuple[str, ...], command: str, chain: bool = True) -> str:
    """A placement chain such as ``numa,binpack``, lower-cased; unknown words refused."""
    words = [w.strip().lower() for w in string_value(text).split(",")]
    if not chain and len(words) != 1:
        raise fail(f"{string_value(text)!r} is not one of {', '.join(known)}", command)
    for word in words:
        if word not in known:
            shown = repr(word) if word else "an empty word"
            raise fail(f"{shown} is not a placement policy; use {', '.join(known)}"
                       + (" or a comma-separated chain such as numa,binpack" if chain else ""), command)
    if len(set(words)) != len(words):
        raise fail(f"{string_value(text)!r} names a policy twice", command)
    if "binpack" in words and "spread" in words:
        raise fail("binpack and spread contradict each other; choose one", command)
    return ",".join(words)


def card_list(text: str, pattern: re.Pattern, what: str, command: str) -> list[str]:
    """A comma-separated list of card ids or type names, each checked."""
    items = [item.strip() for item in string_value(text).split(",")]
    if len(items) > MAX_LIST_ITEMS:
        raise fail(f"lists {len(items)} cards; at most {MAX_LIST_ITEMS}", command)
    for item in items:
        if not item:
            raise fail(f"{string_value(text)!r} has an empty item; separate names with single commas", command)
        if len(item) > MAX_ITEM_LENGTH or not pattern.match(item):
            raise fail(f"{item[:MAX_ITEM_LENGTH]!r} is not {what}", command)
    return items


def boolean(text: str, command: str) -> bool:
    word = string_value(text).lower()
    if word not in _WORDS:
        raise fail(f"{string_value(text)!r} is not true or false", command)
    return _WORDS[word]


def _refuse_overlap(found: dict[str, object], use: str, avoid: str, use_cmd: str, avoid_cmd: str) -> None:
    both = set(str(found.get(use, "")).lower().split(",")) & set(str(found.get(avoid, "")).lower().split(","))
    both.discard("")
    if both:
        raise fail(f"{', '.join(sorted(both))} is also in {use_cmd}; a card cannot be both used and avoided",
                   avoid_cmd)


def _given(r: RuleReader, command: str) -> str | None:
    text = r.get(command)
    return text if text is not None and text.strip() else None


def _warn_unused_placement(placement: dict[str, object]) -> None:
    given = [c for c, attr in PLACEMENT_COMMANDS.items() if attr in placement]
    if given:
        warnings.warn(f"{', '.join(given)} has no effect: the job asks for no GPU (add request_gpus "
                      "or a request_gpu_memory / request_gpu_cores share)", SubmitWarning, stacklevel=2)
