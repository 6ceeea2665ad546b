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
                    "JobMaterializeNextProcId", "JobUniverse", "NumJobStarts", "BytesRecvd", "BytesSent",
                    "TransferringInput", "TransferringOutput", "TransferQueued"]


def _get(ad, name: str, default=None):
    try:
        return ad.eval(name)
    except KeyError:
        return default


def short_time(epoch: object) -> str:
    """A date as condor_q's QDATE column writes it (format_date in HTCondor's
    format_time.cpp): ``%2d/%-2d %02d:%02d`` month, day, hour, minute, eleven
    characters; a missing or negative time is ``    ???    ``."""
    if not isinstance(epoch, (int, float)) or isinstance(epoch, bool) or epoch < 0:
        return "    ???    "
    parts = time.localtime(epoch)
    return f"{parts.tm_mon:2d}/{parts.tm_mday:<2d} {parts.tm_hour:02d}:{parts.tm_min:02d}"


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
    """The job id as the print formats write it: ClusterId ``%4d.`` in five
    columns joined to ProcId ``%-3d`` in three (no space between)."""
    cluster, proc = _get(ad, "ClusterId", 0), _get(ad, "ProcId", 0)
    if isinstance(cluster, int) and isinstance(proc, int):
        return f"{f'{cluster:4d}.':>5}{proc:<3d}"
    return f"{_job_id(ad):<8}"


def _owner_cell(ad) -> str:
    return f"{str(_get(ad, 'Owner', '') or '??'):<14}"


#: The headings the job tables share: the id (`` ID`` in 5, `` `` in 3) and OWNER in 14.
ID_OWNER_HEADING = " ID     " + " " + f"{'OWNER':<14}"


def nobatch_table(ads: Iterable, now: float) -> list[str]:
    """One line per job (condor_q's jobDefault print format): ID OWNER SUBMITTED
    RUN_TIME ST PRI SIZE CMD; SUBMITTED right in 11, RUN_TIME right in 12, ST in 2,
    PRI as wide as its widest value (at least 3), SIZE in MiB ``%.1f`` right in 4."""
    ads = list(ads)
    priorities = [str(_get(ad, "JobPrio", 0) or 0) for ad in ads]
    pri_width = max([3, *(len(text) for text in priorities)])
    lines = [f"{ID_OWNER_HEADING} {'  SUBMITTED':<11} {'    RUN_TIME':<12} ST {'PRI':<{pri_width}} SIZE CMD"]
    for ad, priority in zip(ads, priorities):
        size = (_get(ad, "ImageSize", 0) or 0) / 1024.0
        lines.append(f"{_id_cell(ad)} {_owner_cell(ad)} {short_time(_get(ad, 'QDate')):>11} "
                     f"{run_time(_job_run_time(ad, now)):>12} {STATUS_LETTERS.get(_get(ad, 'JobStatus'), '?'):<2} "
                     f"{priority:<{pri_width}} {size:>4.1f} {_command(ad)}")
    return lines


def hold_table(ads: Iterable) -> list[str]:
    """Held jobs (condor_q's jobHold print format): ID OWNER HELD_SINCE (the
    EnteredCurrentStatus date, right in 11) HOLD_REASON (whole)."""
    lines = [f"{ID_OWNER_HEADING} {'HELD_SINCE':<11} HOLD_REASON"]
    for ad in ads:
        lines.append(f"{_id_cell(ad)} {_owner_cell(ad)} {short_time(_get(ad, 'EnteredCurrentStatus')):>11} "
                     f"{_get(ad, 'HoldReason', '') or ''}")
    return lines


def run_host(ad) -> str:
    """Where a running job runs: its ``RemoteHost``, and the pool in parentheses when it
    flocked to another pool (``RemotePool``)."""
    host = _get(ad, "RemoteHost") or ""
    pool = _get(ad, "RemotePool")
    return f"{host} ({pool})" if isinstance(pool, str) and pool else str(host)


def run_table(ads: Iterable, now: float) -> list[str]:
    """Running jobs (condor_q's jobRuntime print format): ID OWNER SUBMITTED
    RUN_TIME HOST(S), a flocked job's pool beside its host."""
    lines = [f"{ID_OWNER_HEADING} {'  SUBMITTED':<11} {'    RUN_TIME':<12} HOST(S)"]
    for ad in ads:
        lines.append(f"{_id_cell(ad)} {_owner_cell(ad)} {short_time(_get(ad, 'QDate')):>11} "
                     f"{run_time(_job_run_time(ad, now)):>12} {run_host(ad)}")
    return lines


def readable_bytes(amount: object) -> str:
    """A byte count as HTCondor's metric_units writes it: divided by 1024 while above
    1024 (up to TB), ``%.1f`` and the unit (``B `` with its trailing space, KB, MB, GB,
    TB); ``??`` when the job has no such count."""
    if not isinstance(amount, (int, float)) or isinstance(amount, bool):
        return "??"
    value, units = float(amount), ["B ", "KB", "MB", "GB", "TB"]
    power = 0
    while value > 1024.0 and power < len(units) - 1:
        value /= 1024.0
        power += 1
    return f"{value:.1f} {units[power]}"


#: The jobs ``-io`` shows (the WHERE of condor_q's jobIO print format).
IO_CONSTRAINT = ("(JobUniverse == 1 || TransferQueued =?= true || TransferringOutput =?= true"
                 " || TransferringInput =?= true)")


def _transfer_states(ad) -> str:
    """condor_q -io's MISC cell for a job outside the standard universe:
    ``transfer=`` and which of in, out and queued are under way."""
    states = [word for word, name in (("in", "TransferringInput"), ("out", "TransferringOutput"),
                                      ("queued", "TransferQueued")) if _get(ad, name) is True]
    return "transfer=" + ",".join(states) if states else ""


def io_table(ads: Iterable) -> list[str]:
    """Jobs moving files (condor_q's jobIO print format): ID OWNER RUNS (NumJobStarts,
    ``%4d``) ST INPUT (BytesRecvd) OUTPUT (BytesSent) RATE (both, in 10) MISC."""
    lines = [f"{ID_OWNER_HEADING} RUNS ST  INPUT  OUTPUT {' RATE':<10} MISC"]
    for ad in ads:
        starts = _get(ad, "NumJobStarts")
        received, sent = _get(ad, "BytesRecvd"), _get(ad, "BytesSent")
        both = received + sent if all(isinstance(v, (int, float)) for v in (received, sent)) else None
        lines.append(f"{_id_cell(ad)} {_owner_cell(ad)} {starts if isinstance(starts, int) else '?':>4} "
                     f"{STATUS_LETTERS.get(_get(ad, 'JobStatus'), '?'):<2} {readable_bytes(received):>6} "
                     f"{readable_bytes(sent):>7} {readable_bytes(both):>10} {_transfer_states(ad)}".rstrip())
    return lines


def fitted(lines: list[str], width: int | None) -> list[str]:
    """Rows cut to ``width`` characters, as condor_q cuts its tables to one less than
    the console's width (80 when the output is not a terminal) unless ``-wide``;
    ``None`` leaves them whole."""
    return lines if width is None else [line[:width] for line in lines]


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


#: JobUniverse of a scheduler-universe job (DAGMan), which the totals lines leave out.
SCHEDULER_UNIVERSE = 7


def job_counts(ads: Iterable) -> tuple[int, int, int, int, int, int, int]:
    """(jobs, completed, removed, idle, running, held, suspended) as condor_q counts
    them (count_job in queue.cpp): Transferring Output counts as running, and
    scheduler-universe jobs are not counted at all."""
    counts = dict.fromkeys(range(1, 8), 0)
    for ad in ads:
        status = _get(ad, "JobStatus")
        if _get(ad, "JobUniverse") == SCHEDULER_UNIVERSE or status not in counts:
            continue
        counts[2 if status == 6 else status] += 1
    running = counts[2]
    return (sum(counts.values()), counts[4], counts[3], counts[1], running, counts[5], counts[7])


def totals_line(label: str, ads: Iterable) -> str:
    """``Total for LABEL: N jobs; C completed, X removed, I idle, R running, H held, S suspended``."""
    jobs, completed, removed, idle, running, held, suspended = job_counts(ads)
    return (f"Total for {label}: {jobs} jobs; {completed} completed, {removed} removed, {idle} idle, "
            f"{running} running, {held} held, {suspended} suspended")


def totals_lines(query: Iterable, mine: tuple[str, Iterable] | None, everyone: Iterable) -> list[str]:
    """condor_q's standard summary (standard_summary2 and 3 in queue.cpp): the query's
    line, the user's (``mine`` is the name and the jobs; None with ``-allusers``), then
    every user's.
    The summary is one row whose columns are joined by spaces and whose label cells
    begin with a newline, so every line but the last ends with a space."""
    labelled = [("query", query), *([] if mine is None else [mine]), ("all users", everyone)]
    lines = [totals_line(label, ads) for label, ads in labelled]
    return [line + " " for line in lines[:-1]] + lines[-1:]


def schedd_banner(name: str, address: str, now: float) -> str:
    """``-- Schedd: NAME : <ADDRESS> @ MM/DD/YY HH:MM:SS``."""
    stamp = time.strftime("%m/%d/%y %H:%M:%S", time.localtime(now))
    return f"-- Schedd: {name} : <{address}> @ {stamp}"
