"""Accounting groups end to end on a real 4-slot personal pool with GROUP_NAMES =
group_a, group_b and GROUP_QUOTA_group_a = 1: jobs of `accounting_group = group_a` are
the Submitter group_a.<user>@<domain> (beside <user>@<domain> for the user's plain
jobs), run one at a time as group_a's quota says although slots stay free, and
`roost userprio` charges group_a's user, not the plain user, for them."""

from __future__ import annotations

import json

import pytest

from tests.integration.conftest import roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

POOL_ENV = {"_ROOST_NUM_CPUS": "4", "_ROOST_GROUP_NAMES": "group_a, group_b", "_ROOST_GROUP_QUOTA_group_a": "1",
            "_ROOST_GROUP_QUOTA_group_b": "1"}

SCRIPT = """#!/bin/sh
echo "start $(date +%s.%N)" >> {shared}/span.$1
sleep 6
echo "end $(date +%s.%N)" >> {shared}/span.$1
"""

SUBMIT = """executable = {shared}/job.sh
arguments = {tag}.$(Process)
request_cpus = 1
request_memory = 32M
{extra}
queue {count}
"""


def submit(env, shared, tag: str, count: int, extra: str = "") -> str:
    path = shared / f"{tag}.sub"
    path.write_text(SUBMIT.format(shared=shared, tag=tag, count=count, extra=extra))
    return roost(env, "submit", str(path)).stdout.split("cluster")[-1].strip(" .\n")


def spans(shared, tag: str) -> list[tuple[float, float]]:
    """Each finished job's (start, end) of one submit, in start order."""
    found = []
    for path in shared.glob(f"span.{tag}.*"):
        times = dict(line.split() for line in path.read_text().splitlines() if line.strip())
        if "end" in times:
            found.append((float(times["start"]), float(times["end"])))
    return sorted(found)


def userprio(env) -> dict[str, dict]:
    rows = json.loads(roost(env, "userprio", "-allusers", "-json").stdout)
    return {row["Name"]: row for row in rows}


def test_group_jobs_are_the_group_users_submitter_and_charge_it(pool, shared_dir):
    """Two group_a jobs and one plain job: Submitters group_a.<user>@<domain> and
    <user>@<domain>; the group's jobs never run together (quota 1), and while they run
    userprio shows group_a's user with one slot in use and usage charged to it."""
    env = pool["env"]
    (shared_dir / "job.sh").write_text(SCRIPT.format(shared=shared_dir))
    (shared_dir / "job.sh").chmod(0o755)
    grouped = submit(env, shared_dir, "grouped", 2, "accounting_group = group_a")
    plain = submit(env, shared_dir, "plain", 1)
    try:
        user = roost(env, "q", "-af", "User", "-constraint", f"ClusterId == {plain}").stdout.split()[0]
        owner, domain = user.rsplit("@", 1)
        group_user = f"group_a.{owner}@{domain}"
        assert roost(env, "q", "-af", "AccountingGroup", "-constraint",
                     f"ClusterId == {grouped}").stdout.split() == [f"group_a.{owner}"] * 2
        wait_for(lambda: {group_user, user} <= set(roost(env, "status", "-submitters", "-af", "Name").stdout.split()),
                 seconds=30, what=f"Submitters {group_user} and {user}", step=0.5)
        wait_for(lambda: userprio(env).get(group_user, {}).get("ResourcesUsed") == 1, seconds=60,
                 what=f"roost userprio showing {group_user} with one slot in use", step=0.5)
        wait_for(lambda: len(spans(shared_dir, "grouped")) == 2 and len(spans(shared_dir, "plain")) == 1,
                 seconds=120, what="every job finished", step=0.5)
    finally:
        roost(env, "rm", grouped, plain, check=False)
    first, second = spans(shared_dir, "grouped")
    assert second[0] >= first[1], f"group_a's two jobs ran at once past its quota of 1: {first}, {second}"
    rows = userprio(env)
    assert rows[group_user]["AccumulatedUsage"] >= 6, rows[group_user]  # two jobs of 6 s, one at a time
    assert rows[user]["AccumulatedUsage"] < rows[group_user]["AccumulatedUsage"], rows
