"""The price of flocking: short jobs (``/bin/true``) from one submit host run through two
pools, beside the same jobs in one pool of the same total slots, measured in the same run.

Flocking: pool A (central manager, submit host, one execute host of 2 slots) flocks to
pool B (central manager, one execute host of 2 slots) with ``FLOCK_TO``; the pools trust
each other with ``roost pool trust`` as an administrator does. One pool: a central
manager, a submit host and two execute hosts of 2 slots each. Both are made of network
namespaces on this machine (tests/support/netns.py; root only), one after the other.

Prints each run's jobs/s (submit to the last Terminated event of the user log), the
ratio flocking/one pool, how many jobs ran in B, and the seconds from submit to the
first job starting in B (the first 001 Execute event naming B's execute host).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TRUE_JOBS = """executable = /bin/true
log = true.log
request_cpus = 1
request_memory = 16M
queue {count}
"""

ONE_POOL = {"cm": ["CentralManager"], "submit": ["Submit"], "exec1": ["Execute"], "exec2": ["Execute"]}
TWO_POOLS = {
    "A": {"cm-a": ["CentralManager"], "submit-a": ["Submit"], "exec-a": ["Execute"]},
    "B": {"cm-b": ["CentralManager"], "exec-b": ["Execute"]},
}
#: Pool B is the second pool: its central manager, its first host, is 198.18.1.2.
B_CENTRAL_MANAGER = "198.18.1.2"
SLOTS = {"NUM_CPUS": "2", "MEMORY": "1024"}
FLOCK_CONFIG = {"exec-a": SLOTS, "exec-b": SLOTS,
                "submit-a": {"FLOCK_TO": B_CENTRAL_MANAGER}, "cm-b": {"FLOCK_FROM": "submit-a"}}


def run_jobs(pool, submit_host: str, count: int, timeout: float, remote_host=None,
             ) -> tuple[float, int, float | None]:
    """Submit ``count`` /bin/true jobs on ``submit_host`` and wait for every Terminated event:
    jobs/s, how many Execute events name ``remote_host`` (a netns ``Host``), and the
    seconds from submit to the first of them (None when none did)."""
    from bindings.eventlog import JobEventLog, JobEventType

    work = tempfile.mkdtemp(prefix="roost-flocking-", dir=pool.base)
    os.chmod(work, 0o755)
    with open(os.path.join(work, "true.sub"), "w", encoding="utf-8") as handle:
        handle.write(TRUE_JOBS.format(count=count))
    began = time.monotonic()
    pool.roost(submit_host, "submit", "true.sub", cwd=work)
    events = JobEventLog(os.path.join(work, "true.log"))
    done, remote, first_remote = 0, 0, None
    while done < count:
        if time.monotonic() - began > timeout:
            raise SystemExit(f"only {done} of {count} jobs terminated within {timeout:g} s")
        for event in events.events(stop_after=1):
            if event.type == JobEventType.JOB_TERMINATED:
                done += 1
                if done == count:  # not the reader's second of waiting for more
                    break
            elif event.type == JobEventType.EXECUTE and ran_at(event, remote_host):
                remote += 1
                first_remote = first_remote if first_remote is not None else time.monotonic() - began
    return count / (time.monotonic() - began), remote, first_remote


def ran_at(event, host) -> bool:
    """Whether an Execute event names ``host``: its address in ExecuteHost or its name in SlotName."""
    return host is not None and (f"{host.address}:" in str(event.get("ExecuteHost", ""))
                                 or str(event.get("SlotName", "")).endswith(f"@{host.name}"))


def one_pool(count: int, timeout: float) -> float:
    """jobs/s through one pool of two execute hosts of 2 slots."""
    from tests.support.netns import netns_pool
    from tests.support.waiting import wait_for

    with netns_pool(ONE_POOL, SLOTS) as pool:
        wait_for(lambda: machines(pool, "submit") == {"exec1", "exec2"}, 60, "the pool's execute hosts")
        rate, _, _ = run_jobs(pool, "submit", count, timeout)
    print(f"one pool (4 slots on two execute hosts): {count} jobs, {rate:.2f} jobs/s")
    return rate


def flocking(count: int, timeout: float) -> float:
    """jobs/s from A's submit host with A's 2 slots and B's 2 slots reached by flocking."""
    from tests.integration.test_flocking import exchange_trust
    from tests.support.netns import netns_pools
    from tests.support.waiting import wait_for

    with netns_pools(TWO_POOLS, host_config=FLOCK_CONFIG) as made:
        a, b = made["A"], made["B"]
        wait_for(lambda: machines(a, "submit-a") == {"exec-a"}, 60, "pool A's execute host")
        wait_for(lambda: machines(b, "cm-b") == {"exec-b"}, 60, "pool B's execute host")
        exchange_trust(a, b)
        rate, remote, first = run_jobs(a, "submit-a", count, timeout, remote_host=b["exec-b"])
    started = f"{first:.1f} s" if first is not None else "never"
    print(f"flocking (A: 2 slots, B: 2 slots, FLOCK_TO = B): {count} jobs, {rate:.2f} jobs/s; "
          f"{remote} ran in B; first job started in B {started} after submit")
    return rate


def machines(pool, host: str) -> set[str]:
    """The machines whose slots ``roost status`` on ``host`` lists."""
    done = pool.roost(host, "status", "-af", "Machine", check=False)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    from tests.support.netns import why_no_namespaces

    reason = why_no_namespaces()
    if reason:
        raise SystemExit(f"benchmarks/flocking.py: {reason}")
    single = one_pool(args.jobs, args.timeout)
    flocked = flocking(args.jobs, args.timeout)
    print(f"flocking/one pool: {flocked / single:.2f}x jobs/s")


if __name__ == "__main__":
    main()
