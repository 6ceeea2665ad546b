"""What a piece of a gang is told about the others: HTCondor's parallel universe
variables ``_CONDOR_PROCNO`` (its node number, the proc number), ``_CONDOR_NPROCS``
(the gang's size) and ``_CONDOR_CONTACT_FILE`` (a file in the sandbox with a line
``<procno> <host> <slot>`` per piece), and ``ROOST_GANG_HOSTS`` ("host:slot" of every
piece, comma-separated in proc order). The schedd puts the places in the job's
``GangHosts`` when it activates the pieces together."""

from __future__ import annotations

import os

import classad
from startd.errors import StarterError
from transfer.plan import CONTACT_NAME


def gang_places(job: classad.ClassAd) -> list[tuple[str, str]] | None:
    """The ``(host, slot)`` of every piece from ``GangHosts``, or None when the job
    is no piece of a gang (or its places are malformed)."""
    hosts, size = job.evaluate("GangHosts"), job.evaluate("GangSize")
    if type(hosts) is not str or type(size) is not int or size < 2:
        return None
    places = [entry.strip().rpartition(":") for entry in hosts.split(",")]
    if len(places) != size or any(not host or not slot for host, _, slot in places):
        return None
    return [(host, slot) for host, _, slot in places]


def gang_environment(job: classad.ClassAd, sandbox: str) -> dict[str, str]:
    """The variables of a gang's piece, writing its contact file into ``sandbox``
    (with the job account's rights: the caller acts as it); {} for any other job.

    Raises:
        StarterError: the contact file cannot be written (an input symlink in its place).
    """
    places = gang_places(job)
    proc = job.evaluate("ProcId")
    if places is None or type(proc) is not int:
        return {}
    path = os.path.join(sandbox, CONTACT_NAME)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(f"{node} {host} {slot}\n" for node, (host, slot) in enumerate(places))
    except OSError as exc:
        raise StarterError(f"job {job.evaluate('ClusterId')}.{proc}: cannot write the gang's contact file "
                           f"{CONTACT_NAME} in the sandbox (an input of that name?): {exc.strerror}") from None
    return {"_CONDOR_PROCNO": str(proc), "_CONDOR_NPROCS": str(len(places)),
            "ROOST_GANG_HOSTS": ",".join(f"{host}:{slot}" for host, slot in places),
            "_CONDOR_CONTACT_FILE": path}
