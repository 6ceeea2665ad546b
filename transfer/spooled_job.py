"""Jobs submitted with ``-spool`` (condor_submit.rst, condor_transfer_data.rst): their
inputs live in the schedd's spool, not in the submit directory, and their outputs stay
there until ``roost transfer_data`` fetches them.

The ad changes follow HTCondor: the job is queued held with code 16 ("Spooling input
data files") and ``LeaveJobInQueue`` keeps it ten days after completion (condor_submit's
remote-submit rule); once its inputs arrive the schedd points ``Iwd`` at the spool and
makes the spooled paths plain names there, keeping the originals as ``SUBMIT_<attr>``
(qmgmt.cpp ``rewriteSpooledJobAd``); outputs are fetched into ``SUBMIT_Iwd`` with the
remaps kept in ``SUBMIT_TransferOutputRemaps``. Pure code: ads in, changes out.
"""

from __future__ import annotations

import os
from typing import Any

import classad
from transfer.plan import OutputPlan, is_url, output_plan, parse_remaps, split_list, string_attr

#: HoldReasonCode of a job whose inputs are still on their way to the spool (SpoolingInput).
SPOOLING_INPUT = 16
SPOOLING_REASON = "Spooling input data files"
#: condor_submit's LeaveJobInQueue for a spooled job: kept ten days after it completes.
LEAVE_IN_QUEUE = ("JobStatus == 4 && (CompletionDate =?= UNDEFINED || CompletionDate == 0 || "
                  "((time() - CompletionDate) < 864000))")
#: The attributes rewriteSpooledJobAd makes plain names in the spool (True: a list),
#: with the attribute that says whether each is transferred at all.
_REWRITTEN = (("Cmd", False, "TransferExecutable"), ("In", False, "TransferIn"),
              ("TransferInput", True, None), ("UserLog", False, None), ("X509UserProxy", False, None))
_NULL_FILES = ("", "/dev/null")


def spool_directory(spool: str, cluster: int, proc: int) -> str:
    """Where job ``cluster.proc``'s spooled sandbox lives under the schedd's ``spool``."""
    return os.path.join(spool, str(cluster), str(proc), f"cluster{cluster}.proc{proc}.spool")


def held_for_spooling(ad: classad.ClassAd) -> dict[str, Any]:
    """The changes that queue a ``-spool`` job held until its inputs arrive; its own
    ``LeaveJobInQueue`` is kept when it set one (anything but none or the default false)."""
    changes: dict[str, Any] = {"JobStatus": 5, "HoldReasonCode": SPOOLING_INPUT, "HoldReasonSubCode": 0,
                               "HoldReason": SPOOLING_REASON}
    if "LeaveJobInQueue" not in ad or ad.evaluate("LeaveJobInQueue") is False:
        changes["LeaveJobInQueue"] = classad.ExprTree(LEAVE_IN_QUEUE)
    return changes


def waits_for_spooling(ad: classad.ClassAd) -> bool:
    """Whether the job is held waiting for its spooled inputs."""
    return ad.evaluate("JobStatus") == 5 and ad.evaluate("HoldReasonCode") == SPOOLING_INPUT


def _transferred(ad: classad.ClassAd, flag: str | None) -> bool:
    return flag is None or ad.evaluate(flag) is not False


def _plain_names(value: str, is_list: bool) -> tuple[str, bool]:
    """``value`` with each path cut to its last part (URLs kept), and whether anything changed."""
    paths = split_list(value) if is_list else [value]
    names = [path if is_list and is_url(path) else os.path.basename(path.rstrip("/")) or path for path in paths]
    return ",".join(names), names != paths


def spooled_rewrite(ad: classad.ClassAd, spool_dir: str) -> dict[str, Any]:
    """The changes that make a spooled job run from ``spool_dir`` (rewriteSpooledJobAd):
    ``SUBMIT_Iwd`` keeps the submit directory, ``Iwd`` becomes the spool, each spooled
    path becomes its plain name there (its original kept as ``SUBMIT_<attr>``), and
    ``TransferOutputRemaps`` waits in ``SUBMIT_TransferOutputRemaps`` for the fetch
    (only URL remaps stay, since those still apply when the job ends)."""
    if "SUBMIT_Iwd" in ad:
        return {}
    changes: dict[str, Any] = {"SUBMIT_Iwd": string_attr(ad, "Iwd"), "Iwd": spool_dir}
    remaps = string_attr(ad, "TransferOutputRemaps")
    if remaps:
        job = f"{ad.evaluate('ClusterId')}.{ad.evaluate('ProcId')}"
        pairs = parse_remaps(job, remaps)
        changes["SUBMIT_TransferOutputRemaps"] = ";".join(f"{a}={b}" for a, b in pairs if not is_url(b))
        kept = ";".join(f"{a}={b}" for a, b in pairs if is_url(b))
        changes["TransferOutputRemaps"] = kept or None
    for attr, is_list, flag in _REWRITTEN:
        value = string_attr(ad, attr)
        if value is None or value in _NULL_FILES or not _transferred(ad, flag):
            continue
        names, changed = _plain_names(value, is_list)
        if changed:
            changes["SUBMIT_" + attr] = value
            changes[attr] = names
    return changes


def spooled_inputs(ad: classad.ClassAd) -> set[str]:
    """The top-level names in the spool that are the job's spooled inputs, not its outputs."""
    names = set()
    for attr, is_list, flag in _REWRITTEN[:3]:
        value = string_attr(ad, attr)
        if value and value not in _NULL_FILES and _transferred(ad, flag):
            names.update(os.path.basename(path.rstrip("/")) for path in (split_list(value) if is_list else [value])
                         if not is_url(path))
    return names


def fetch_plan(ad: classad.ClassAd) -> OutputPlan:
    """Where fetched outputs go: the job's output plan with ``Iwd`` back at ``SUBMIT_Iwd``
    and the remaps of ``SUBMIT_TransferOutputRemaps``."""
    submitted = ad.copy()
    if string_attr(ad, "SUBMIT_Iwd"):
        submitted["Iwd"] = string_attr(ad, "SUBMIT_Iwd")
    remaps = string_attr(ad, "SUBMIT_TransferOutputRemaps")
    if remaps is not None:
        submitted["TransferOutputRemaps"] = remaps
    return output_plan(submitted)


__all__ = ["SPOOLING_INPUT", "SPOOLING_REASON", "LEAVE_IN_QUEUE", "spool_directory", "held_for_spooling",
           "waits_for_spooling", "spooled_rewrite", "spooled_inputs", "fetch_plan"]
