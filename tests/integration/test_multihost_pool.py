"""A pool on four hosts (network namespaces on this machine): a central manager, a
submit host and two execute hosts, each with its own address in 198.18.0.0/15, its
own host name and its own master; the central manager started with `roost pool up
-role central-manager`, the others added with `roost pool join`, every link TLS. Jobs with input and output files submitted on the
submit host run on both execute hosts; `roost status`, `roost status -master` and
`roost pool status` on the submit host see every host."""

from __future__ import annotations

import collections
import sys
import time

import pytest

from tests.integration.test_jobs_files import submitted_cluster
from tests.support.netns import netns_pool
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

HOSTS = {"cm": ["CentralManager"], "submit": ["Submit"], "exec1": ["Execute"], "exec2": ["Execute"]}
JOBS = 100
#: Four cores each, so each execute host runs several jobs at once as a real one would.
POOL_CONFIG = {"NUM_CPUS": "4", "MEMORY": "2048"}
#: exec2 listens on every interface (BIND_ALL_INTERFACES), exec1 on its address alone.
HOST_CONFIG = {"exec2": {"BIND_ALL_INTERFACES": "true"}}

#: Reads its own input and the shared one, writes where it ran.
JOB = """#!/bin/sh
cat "in_$1.txt" common.txt > "out_$1.txt"
echo "ran on $(hostname)" >> "out_$1.txt"
"""


def submit_file(count: int, *inputs: str) -> str:
    """``count`` jobs running job.sh $(Process), each sent in_$(Process).txt (and
    ``inputs``) and bringing back out_$(Process).txt."""
    files = ", ".join(("in_$(Process).txt", *inputs))
    return f"""executable = job.sh
arguments = $(Process)
transfer_input_files = {files}
transfer_output_files = out_$(Process).txt
should_transfer_files = YES
when_to_transfer_output = ON_EXIT
log = job.log
request_cpus = 1
request_memory = 32M
queue {count}
"""


SUBMIT = submit_file(JOBS, "common.txt")


@pytest.fixture(scope="module")
def hosts():
    """The four-host pool, every master up, for the whole module."""
    with netns_pool(HOSTS, POOL_CONFIG, host_config=HOST_CONFIG) as pool:
        wait_for(lambda: machines(pool) == {"exec1", "exec2"}, 60, "both execute hosts in `roost status`")
        yield pool


def machines(pool) -> set[str]:
    """The machines whose slots `roost status` on the submit host lists."""
    done = pool.roost("submit", "status", "-af", "Machine", check=False)
    return set(done.stdout.split()) if done.returncode == 0 else set()


def test_every_host_has_its_own_address(hosts):
    """Each daemon advertises its host's 198.18 address, the collector on port 9618 with TLS."""
    out = hosts.roost("submit", "status", "-af", "Machine", "StartdIpAddr").stdout
    for name in ("exec1", "exec2"):
        assert f"{name} <{hosts[name].address}:" in out
    collector = hosts.roost("submit", "status", "-collector", "-af", "MyAddress").stdout.strip()
    assert collector == f"<{hosts['cm'].address}:9618?tls=1>"
    schedd = hosts.roost("submit", "status", "-schedd", "-af", "ScheddIpAddr").stdout.strip()
    assert schedd.startswith(f"<{hosts['submit'].address}:")


def test_status_master_lists_every_hosts_master(hosts):
    """`roost status -master` on the submit host lists the master of all four hosts, with their daemons."""
    out = hosts.roost("submit", "status", "-master", "-af", "Machine", "MyAddress").stdout
    listed = dict(line.split() for line in out.splitlines() if line.strip())
    assert set(listed) == set(HOSTS)
    for name, address in listed.items():
        assert address.startswith(f"<{hosts[name].address}:")
    table = hosts.roost("submit", "status", "-master").stdout
    daemons = {line.split()[1]: " ".join(line.split()[3:]) for line in table.splitlines()[2:] if line.strip()}
    assert daemons == {"cm": "MASTER, COLLECTOR, NEGOTIATOR", "submit": "MASTER, SCHEDD",
                       "exec1": "MASTER, STARTD", "exec2": "MASTER, STARTD"}


def test_pool_status_shows_every_hosts_daemons(hosts):
    """`roost pool status` on the submit host lists each host's daemons, with the host."""
    out = hosts.roost("submit", "pool", "status", "-dir", str(hosts["submit"].directory)).stdout
    rows = {(line.split()[0], line.split()[-1]) for line in out.splitlines()[2:] if len(line.split()) >= 7}
    assert {("MASTER", name) for name in HOSTS} <= rows
    assert {("COLLECTOR", "cm"), ("NEGOTIATOR", "cm"), ("SCHEDD", "submit"),
            ("STARTD", "exec1"), ("STARTD", "exec2")} <= rows


def test_jobs_with_files_run_on_both_execute_hosts(hosts, tmp_path):
    """Jobs submitted on the submit host get their inputs on the execute hosts and send
    their outputs back; the completed jobs ran on both hosts."""
    (tmp_path / "job.sh").write_text(JOB)
    (tmp_path / "job.sh").chmod(0o755)
    (tmp_path / "common.txt").write_text("shared input\n")
    for index in range(JOBS):
        (tmp_path / f"in_{index}.txt").write_text(f"input {index}\n")
    (tmp_path / "job.sub").write_text(SUBMIT)
    started = time.monotonic()
    cluster = submitted_cluster(hosts.roost("submit", "submit", "job.sub", cwd=tmp_path))
    hosts.roost("submit", "wait", "-wait", "240", "job.log", cwd=tmp_path, timeout=260)
    took = time.monotonic() - started
    ran_on = collections.Counter()
    for index in range(JOBS):
        lines = (tmp_path / f"out_{index}.txt").read_text().splitlines()
        assert lines[:2] == [f"input {index}", "shared input"]
        ran_on[lines[2]] += 1
    assert set(ran_on) == {"ran on exec1", "ran on exec2"}, ran_on
    history = hosts.roost("submit", "history", "-af", "LastRemoteHost", "-constraint",
                          f"ClusterId == {cluster}").stdout.split()
    assert len(history) == JOBS
    assert {slot.rsplit("@", 1)[-1] for slot in history} == {"exec1", "exec2"}
    print(f"{JOBS} jobs with files on two execute hosts in {took:.1f}s ({dict(ran_on)})")


def reachable(pool, host: str, address: str) -> bool:
    """True when ``host`` can open a TCP connection to ``address`` (``ip:port``) within a second."""
    ip, port = address.rsplit(":", 1)
    probe = f"import socket; socket.create_connection(({ip!r}, {port}), timeout=1).close()"
    return pool.run(host, [sys.executable, "-c", probe], check=False, timeout=20).returncode == 0


def test_a_cut_link_isolates_one_host_until_restored(hosts):
    """With exec2's link cut the submit host cannot reach exec2's startd; once restored it can."""
    startd = (hosts["exec2"].log_dir / ".startd_address").read_text().strip().strip("<>").split("?")[0]
    assert reachable(hosts, "submit", startd)
    hosts.cut("exec2")
    try:
        assert not reachable(hosts, "submit", startd)
        assert reachable(hosts, "exec1", f"{hosts['cm'].address}:9618")
    finally:
        hosts.restore("exec2")
    wait_for(lambda: reachable(hosts, "submit", startd), 10, "exec2 reachable again")


def test_bind_all_interfaces_listens_everywhere_and_advertises_the_host_address(hosts):
    """exec2 (BIND_ALL_INTERFACES) answers on its own loopback too, exec1 only on its
    address; both advertise their 198.18 address."""
    for name, everywhere in (("exec1", False), ("exec2", True)):
        startd = (hosts[name].log_dir / ".startd_address").read_text().strip().strip("<>").split("?")[0]
        assert startd.startswith(f"{hosts[name].address}:")
        port = startd.rsplit(":", 1)[1]
        assert reachable(hosts, name, startd)
        assert reachable(hosts, name, f"127.0.0.1:{port}") is everywhere
