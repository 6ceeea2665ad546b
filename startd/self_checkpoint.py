"""Whether a job's exit is a self-checkpoint, by HTCondor's rule (the starter's
``VanillaProc::JobReaper`` and ``computeDesiredExitStatus``; the manual's
"Self-Checkpointing Applications"): the job ad has ``WantFTOnCheckpoint`` true (submit
sets it with ``checkpoint_exit_code`` or ``transfer_checkpoint_files``), and the job
exited with ``SuccessCheckpointExitCode``, or, when ``SuccessCheckpointExitBySignal``
is true, died of ``SuccessCheckpointExitSignal``. Such an exit is not the job's end:
the starter sends the checkpoint to the submit side and starts the job again in the
same sandbox. An exit during a vacate is never a checkpoint here."""

from __future__ import annotations

import signal

import classad
from startd.usage import Usage


def _value(job: classad.ClassAd, name: str):
    try:
        return job.eval(name) if name in job else None
    except Exception:  # noqa: BLE001 - an attribute that does not evaluate counts as unset
        return None


def _signal_number(value) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        name = value.strip().upper()
        name = name if name.startswith("SIG") else "SIG" + name
        found = getattr(signal.Signals, name, None) if name in signal.Signals.__members__ else None
        return int(found) if found is not None else None
    return None


def is_checkpoint_exit(job: classad.ClassAd, exit_code: int | None, exit_signal: int | None) -> bool:
    """Whether ending with ``exit_code`` (or death by ``exit_signal``) is job ``job``'s
    promised checkpoint exit."""
    if _value(job, "WantFTOnCheckpoint") is not True:
        return False
    if _value(job, "SuccessCheckpointExitBySignal") is True:
        wanted = _signal_number(_value(job, "SuccessCheckpointExitSignal"))
        return wanted is not None and exit_signal == wanted
    wanted = _value(job, "SuccessCheckpointExitCode")
    return (isinstance(wanted, int) and not isinstance(wanted, bool) and exit_signal is None
            and exit_code == wanted)


def first_checkpoint_number(job: classad.ClassAd) -> int:
    """The number the run's next checkpoint gets: one past the job's ``CheckpointNumber``,
    0 for a job that never checkpointed."""
    last = _value(job, "CheckpointNumber")
    return last + 1 if isinstance(last, int) and not isinstance(last, bool) and last >= 0 else 0


def carried(earlier: Usage, segment: Usage) -> Usage:
    """A run's usage once ``segment`` (one start of the job) follows the ``earlier`` ones:
    CPU seconds add up, memory keeps its peak."""
    return Usage(earlier.user_cpu + segment.user_cpu, earlier.sys_cpu + segment.sys_cpu,
                 max(earlier.rss_kb, segment.rss_kb), max(earlier.image_kb, segment.image_kb))


__all__ = ["is_checkpoint_exit", "first_checkpoint_number", "carried"]
