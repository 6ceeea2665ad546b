"""Two users share a real 2-slot personal pool by priority: alice's priority factor is
made worse with `roost userprio -setfactor`, both users' jobs become idle at the same
moment, and bob (the better priority) gets the slots first and finishes first, while
alice's jobs still run once his are done."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess

import pytest

from bindings.eventlog import JobEventLog, JobEventType
from daemoncore.config import Config
from daemoncore.security import issue_token, load_signing_key, write_token
from tests.integration.conftest import personal_pool, roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.waiting import wait_for

JOBS_PER_USER = 3
JOB = "executable = /bin/sleep\narguments = 1\nhold = true\nlog = {user}.log\nrequest_cpus = 1\n" \
      "request_memory = 64M\nqueue {count}\n"


@pytest.fixture(scope="module")
def names():
    """Who alice and bob are. A root pool writes each user's event log as that user,
    so there they are real local accounts made for the module (and removed after);
    a pool run by an ordinary user writes everything as that user, so any names do."""
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        yield {"alice": "alice", "bob": "bob"}
        return
    made = {role: f"roosttest_{role}_{secrets.token_hex(2)}" for role in ("alice", "bob")}
    for name in made.values():
        subprocess.run(["useradd", "--system", "--no-create-home", name], check=True)
    try:
        yield made
    finally:
        for name in made.values():
            subprocess.run(["userdel", name], check=False)


@pytest.fixture(scope="module")
def shared_pool(tmp_path_factory, names):
    """A personal pool of two 1-CPU pieces, with a token for alice and one for bob."""
    with shared_pool_users(tmp_path_factory, names, {"_ROOST_NUM_CPUS": "2"}) as pool:
        yield pool


@contextlib.contextmanager
def shared_pool_users(tmp_path_factory, names, overrides):
    """A personal pool started with ``overrides``, with a token for alice and one for bob
    (``users``: the environment to run `roost` as each)."""
    with personal_pool(tmp_path_factory.mktemp("home"), overrides) as pool:
        config_file = str(pool["dir"] / "config")
        config = Config.load(config_file, env={**pool["env"], "ROOST_CONFIG": config_file})
        key = load_signing_key(config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE"))
        domain = config.param("TRUST_DOMAIN") or "pool"
        users = {}
        for user in ("alice", "bob"):
            path = str(pool["home"] / f"{user}.token")
            write_token(path, issue_token(key, f"{names[user]}@{domain}", ["READ", "WRITE"], issuer=domain))
            users[user] = {**pool["env"], "ROOST_TOKEN": path}
        yield {**pool, "users": users, "domain": domain}


def run_span(log_path) -> tuple[float, float]:
    """The first Execute time and the last Terminated time in an event log."""
    events = list(JobEventLog(str(log_path)).events(stop_after=0))
    starts = [event.timestamp for event in events if event.type == JobEventType.EXECUTE]
    ends = [event.timestamp for event in events if event.type == JobEventType.JOB_TERMINATED]
    return min(starts), max(ends)


def terminated(log_path) -> int:
    """How many jobs of the event log at ``log_path`` have terminated."""
    if not log_path.exists():
        return 0
    return sum(event.type == JobEventType.JOB_TERMINATED for event in JobEventLog(str(log_path)).events(stop_after=0))


def test_the_better_priority_user_gets_the_slots_first(shared_pool, names, shared_dir, monkeypatch):
    """With alice's factor 1000 times the default (bob's), bob's jobs all finish before alice's first starts."""
    monkeypatch.chdir(shared_dir)  # each user writes its own event log there
    env, users = shared_pool["env"], shared_pool["users"]
    roost(env, "userprio", "-setfactor", f"{names['alice']}@{shared_pool['domain']}", "1000000")
    clusters = {}
    for user in ("alice", "bob"):  # alice first: first come would favour her
        (shared_dir / f"{user}.sub").write_text(JOB.format(user=user, count=JOBS_PER_USER))
        clusters[user] = submitted_cluster(roost(users[user], "submit", f"{user}.sub"))
    owners = roost(env, "q", "-allusers", "-af", "Owner").stdout.split()
    assert sorted(set(owners)) == sorted(names.values())
    roost(env, "release", "-all")  # both users' jobs become idle in one transaction
    for user in ("alice", "bob"):
        wait_for(lambda log=shared_dir / f"{user}.log": terminated(log) == JOBS_PER_USER, seconds=60)
    alice_start, alice_end = run_span(shared_dir / "alice.log")
    bob_start, bob_end = run_span(shared_dir / "bob.log")
    assert bob_start <= alice_start
    assert bob_end <= alice_start, (bob_start, bob_end, alice_start, alice_end)
    rows = json.loads(roost(env, "userprio", "-allusers", "-json").stdout)
    factors = {row["Name"]: row["PriorityFactor"] for row in rows}
    assert factors[f"{names['alice']}@{shared_pool['domain']}"] == 1000000.0
