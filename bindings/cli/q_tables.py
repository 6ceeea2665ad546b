"""The human layouts of ``roost q`` (condor_q): the default batch view grouped by
batch name, ``-nobatch`` one line per job, ``-hold`` with hold reasons, ``-run``, and
the totals lines. Pure functions from job ads to text."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

#: JobStatus -> condor_q's one-letter status.
STATUS_LETTERS = {1: "I", 2: "R", 3: "X", 4: "C", 5: "H", 6: ">", 7: "S"}

#: Attributes the tables read (the CLI projects queries to these).
TABLE_ATTRIBUTES = ["ClusterId", "ProcId", "Owner", "QDate", "JobStatus", "JobPrio", "ImageSize", "Cmd", "Args",
                    "Arguments", "JobBatchName", "RemoteWallClockTime", "ShadowBday", "EnteredCurrentStatus",
                    "HoldReason", "RemoteHost", "LastRemoteHost", "RemotePool", "TotalSubmitProcs",
                    "JobMaterializeNextProcId"]


def _get(ad, name: str, default=None):
    try:
        return ad.eval(name)
    except KeyError:
        return default


def short_time(epoch: object) -> str:
    """``12/2  13:30`` as condor_q writes a date and time."""
    if not isinstance(epoch, (int, float)):
        return "???"
    parts = time.localtime(epoch)
    return f"{parts.tm_mon}/{parts.tm_mday}".ljust(5) + f" {parts.tm_hour:02d}:{parts.tm_min:02d}"


def run_time(seconds: object) -> str:
    """``0+00:00:00``: days, hours, minutes, seconds."""
    total = int(seconds) if isinstance(seconds, (int, float)) else 0
    days, rest = divmod(max(total, 0), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{days}+{hours:02d}:{minutes:02d}:{secs:02d}"


def _job_run_time(ad, now: float) -> int:
    total = _get(ad, "RemoteWallClockTime", 0) or 0
    started = _get(ad, "ShadowBday")
    if _get(ad, "JobStatus") == 2 and isinstance(started, (int, float)):
        total += now - started
    return int(total)


def _command(ad) -> str:
    cmd = os.path.basename(str(_get(ad, "Cmd", "") or ""))
    args = _get(ad, "Args") or _get(ad, "Arguments") or ""
    return f"{cmd} {args}".strip()


def _job_id(ad) -> str:
    return f"{_get(ad, 'ClusterId', '?')}.{_get(ad, 'ProcId', '?')}"


def _id_cell(ad) -> str:
    cluster, proc = _get(ad, "ClusterId", 0), _get(ad, "ProcId", 0)
    return f"{cluster:>4}.{proc:<3}" if isinstance(cluster, int) and isinstance(proc, int) else _job_id(ad)


def nobatch_table(ads: Iterable, now: float) -> list[str]:
    """One line per job: ID OWNER SUBMITTED RUN_TIME ST PRI SIZE CMD."""
    lines = [" ID        OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"]
    for ad in ads:
        size = (_get(ad, "ImageSize", 0) or 0) / 1024.0
        lines.append(f"{_id_cell(ad):<9} {str(_get(ad, 'Owner', '')):<14} {short_time(_get(ad, 'QDate')):>11} "
                     f"{run_time(_job_run_time(ad, now)):>12} {STATUS_LETTERS.get(_get(ad, 'JobStatus'), '?'):<2} "
                     f"{_get(ad, 'JobPrio', 0) or 0:<3} {size:<4.1f} {_command(ad)}")
    return lines


def hold_table(ads: Iterable) -> list[str]:
    """Held jobs: ID OWNER HELD_SINCE HOLD_REASON."""
    lines = [" ID        OWNER          HELD_SINCE  HOLD_REASON"]
    for ad in ads:
        lines.append(f"{_id_cell(ad):<9} {str(_get(ad, 'Owner', '')):<14} "
                     f"{short_time(_get(ad, 'EnteredCurrentStatus')):>11} {_get(ad, 'HoldReason', '') or ''}")
    return lines


def run_host(ad) -> str:
    """Where a running job runs: its ``RemoteHost``, and the pool in parentheses when it
    flocked to another pool (``RemotePool``)."""
    host = _get(ad, "RemoteHost") or ""
    pool = _get(ad, "RemotePool")
    return f"{host} ({pool})" if isinstance(pool, str) and pool else str(host)


def run_table(ads: Iterable, now: float) -> list[str]:
    """Running jobs: ID OWNER SUBMITTED RUN_TIME HOST(S), a flocked job's pool beside its host."""
    lines = [" ID        OWNER            SUBMITTED     RUN_TIME HOST(S)"]
    for ad in ads:
        host = run_host(ad)
        lines.append(f"{_id_cell(ad):<9} {str(_get(ad, 'Owner', '')):<14} {short_time(_get(ad, 'QDate')):>11} "
                     f"{run_time(_job_run_time(ad, now)):>12} {host}")
    return lines


def _batch_key(ad) -> tuple:
    name = _get(ad, "JobBatchName")
    owner = str(_get(ad, "Owner", ""))
    return (owner, str(name)) if isinstance(name, str) and name else (owner, f"ID: {_get(ad, 'ClusterId', '?')}")


def _id_ranges(ids: list[tuple[int, int]]) -> str:
    if not ids:
        return ""
    first, last = min(ids), max(ids)
    if first == last:
        return f"{first[0]}.{first[1]}"
    if first[0] == last[0]:
        return f"{first[0]}.{first[1]}-{last[1]}"
    return f"{first[0]}.{first[1]} ... {last[0]}.{last[1]}"


def _factory_counts(batch: dict, ad) -> None:
    """Note a late-materialisation cluster's TotalSubmitProcs and JobMaterializeNextProcId
    (every proc of a factory cluster carries them) and how many of its procs are present."""
    total, next_id, cluster = (_get(ad, name) for name in ("TotalSubmitProcs", "JobMaterializeNextProcId",
                                                           "ClusterId"))
    if isinstance(total, int) and isinstance(next_id, int):
        seen = batch["factories"].setdefault(cluster, [total, next_id, 0])
        seen[2] += 1


def _factory_totals(batch: dict) -> tuple[int, int]:
    """(procs a batch's factories made that already left the queue, procs they will
    make in all less those present): what DONE and TOTAL add for them."""
    left = sum(next_id - present for _total, next_id, present in batch["factories"].values())
    unseen = sum(total - present for total, _next_id, present in batch["factories"].values())
    return max(left, 0), max(unseen, 0)


def batch_table(ads: Iterable) -> list[str]:
    """One line per batch (batch name, else cluster): OWNER BATCH_NAME SUBMITTED
    DONE RUN IDLE [HOLD] TOTAL JOB_IDS; the HOLD column only when a job is held. A
    late-materialisation cluster counts all its procs in TOTAL (TotalSubmitProcs) and
    those that already left the queue in DONE, so DONE + RUN + IDLE + HOLD falls short
    of TOTAL by the procs not made yet."""
    batches: dict[tuple, dict] = {}
    for ad in ads:
        batch = batches.setdefault(_batch_key(ad), {"qdate": _get(ad, "QDate"), "counts": {}, "ids": [],
                                                    "factories": {}})
        _factory_counts(batch, ad)
        status = _get(ad, "JobStatus")
        batch["counts"][status] = batch["counts"].get(status, 0) + 1
        cluster, proc = _get(ad, "ClusterId"), _get(ad, "ProcId")
        if isinstance(cluster, int) and isinstance(proc, int):
            batch["ids"].append((cluster, proc))
        qdate = _get(ad, "QDate")
        if isinstance(qdate, int) and (batch["qdate"] is None or qdate < batch["qdate"]):
            batch["qdate"] = qdate
    show_hold = any(b["counts"].get(5) for b in batches.values())
    heading = "OWNER  BATCH_NAME    SUBMITTED   DONE   RUN    IDLE" + ("   HOLD" if show_hold else "") + "  TOTAL JOB_IDS"
    lines = [heading]
    for (owner, name), batch in batches.items():
        counts = batch["counts"]
        left, unseen = _factory_totals(batch)

        def cell(*statuses: int, more: int = 0) -> str:
            n = sum(counts.get(s, 0) for s in statuses) + more
            return str(n) if n else "_"
        total = sum(counts.values()) + unseen
        row = (f"{owner:<6} {name:<12} {short_time(batch['qdate']):>11} {cell(3, 4, more=left):>6} {cell(2, 6, 7):>6} "
               f"{cell(1):>6}")
        if show_hold:
            row += f" {cell(5):>6}"
        row += f" {total:>6} {_id_ranges(batch['ids'])}"
        lines.append(row)
    return lines


def totals_line(label: str, ads: Iterable) -> str:
    """``Total for query: N jobs; C completed, X removed, I idle, R running, H held, S suspended``."""
    counts: dict[object, int] = {}
    total = 0
    for ad in ads:
        status = _get(ad, "JobStatus")
        counts[status] = counts.get(status, 0) + 1
        total += 1
    return (f"Total for {label}: {total} jobs; {counts.get(4, 0)} completed, {counts.get(3, 0)} removed, "
            f"{counts.get(1, 0)} idle, {counts.get(2, 0) + counts.get(6, 0)} running, {counts.get(5, 0)} held, "
            f"{counts.get(7, 0)} suspended")


def schedd_banner(name: str, address: str, now: float) -> str:
    """``-- Schedd: NAME : <ADDRESS> @ MM/DD/YY HH:MM:SS``."""
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(now))
    return f"-- Schedd: {name} : <{address}> @ {stamp}"
