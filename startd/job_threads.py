"""What the job is told about the cores it was given: HTCondor's starter sets a list
of thread-count variables that common libraries read (OpenMP, MKL, OpenBLAS, Go,
Julia, TensorFlow, ROOT...) to the slot's ``Cpus``, and ``BATCH_SYSTEM=HTCondor`` so
a job can tell it runs under a batch system. A variable the job's own environment
sets keeps the job's value (users' ``environment = OMP_NUM_THREADS=1`` wins).

The list is HTCondor's default of ``STARTER_NUM_THREADS_ENV_VARS`` (manual: users
manual, "Services for Running Jobs", Environment Variables).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import classad

#: HTCondor's default STARTER_NUM_THREADS_ENV_VARS.
THREAD_COUNT_VARIABLES = (
    "CUBACORES", "GOMAXPROCS", "JULIA_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS", "PYTHON_CPU_COUNT",
    "ROOT_MAX_THREADS", "TF_LOOP_PARALLEL_ITERATIONS", "TF_NUM_THREADS",
)


def slot_cpus(machine_ad: classad.ClassAd) -> int:
    """The cores provisioned to the job: the slot's ``Cpus`` (1 when it is missing or not a
    positive number; a fractional count rounds down, never below 1)."""
    cpus = machine_ad.evaluate("Cpus") if "Cpus" in machine_ad else None
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or cpus != cpus:
        return 1
    return max(1, int(cpus))


def thread_environment(machine_ad: classad.ClassAd, job_env: Mapping[str, str],
                       names: Iterable[str] = THREAD_COUNT_VARIABLES) -> dict[str, str]:
    """``BATCH_SYSTEM`` and each of ``names`` set to the slot's core count, leaving out
    those ``job_env`` (the job's own environment) already sets."""
    cores = str(slot_cpus(machine_ad))
    found = {name: cores for name in names if name not in job_env}
    found["BATCH_SYSTEM"] = "HTCondor"
    return found


__all__ = ["THREAD_COUNT_VARIABLES", "slot_cpus", "thread_environment"]
