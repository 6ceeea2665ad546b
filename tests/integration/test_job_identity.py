"""Which account a job of a root pool runs as, on a real personal pool started by root:
a job of a user with a local account runs with that uid and can neither read the
pool's signing key or tokens, nor list the execute directory, nor read another job's
sandbox; a job of an owner with no local account, or of root, runs as nobody."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from daemoncore.config import Config
from daemoncore.security import issue_token, load_signing_key, write_token
from tests.integration.conftest import ROOST, personal_pool, roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None,
                                reason="jobs run as other accounts only when the daemons run as root")

NOBODY_UID = pwd.getpwnam("nobody").pw_uid if os.geteuid() == 0 else -1

#: Prints its uid, then tries what a job must not be able to do: "name:READ" or "name:refused".
PROBE = """#!/bin/sh
echo "uid:$(id -u)"
probe() {{ if $2 >/dev/null 2>&1; then echo "$1:READ"; else echo "$1:refused"; fi; }}
probe key "cat {key}"
probe daemon_token "cat {daemon_token}"
probe user_token "cat {user_token}"
probe execute_list "ls {execute}"
probe other_sandbox "ls {other}"
probe other_secret "cat {other}/secret.txt"
echo done
"""


@pytest.fixture(scope="module")
def local_user():
    """A real local account for the test (no home), removed afterwards."""
    name = f"roosttest_{secrets.token_hex(3)}"
    subprocess.run(["useradd", "--system", "--no-create-home", name], check=True)
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False)


@pytest.fixture(scope="module")
def root_pool(tmp_path_factory):
    """A personal pool started by root, two slots, with its config read back."""
    with personal_pool(tmp_path_factory.mktemp("home"), {"_ROOST_NUM_CPUS": "2"}) as pool:
        config_file = str(pool["dir"] / "config")
        config = Config.load(config_file, env={**pool["env"], "ROOST_CONFIG": config_file})
        yield {**pool, "config": config, "key": load_signing_key(config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE")),
               "domain": config.param("TRUST_DOMAIN") or "pool"}


def token_env(pool, user: str, where: Path) -> dict:
    """The pool's environment with a READ/WRITE token for ``user``."""
    path = where / f"{user}.token"
    write_token(str(path), issue_token(pool["key"], f"{user}@{pool['domain']}", ["READ", "WRITE"],
                                       issuer=pool["domain"]))
    return {**pool["env"], "ROOST_TOKEN": str(path)}


@pytest.fixture
def submit_dir():
    """Makes submit directories under /tmp (reachable by every account, as a user's
    home is), owned by the account given; removed afterwards."""
    made = []

    def make(owner: pwd.struct_passwd | None = None) -> Path:
        path = Path(tempfile.mkdtemp(prefix="roost-identity-"))
        made.append(path)
        if owner is not None:
            os.chown(path, owner.pw_uid, owner.pw_gid)
        path.chmod(0o755)
        return path
    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


def submit(env: dict, where: Path, text: str) -> None:
    (where / "job.sub").write_text(text)
    done = subprocess.run([*ROOST, "submit", "job.sub"], env=env, cwd=where, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def startd_log(pool) -> str:
    return (pool["dir"] / "log" / "StartdLog").read_text(errors="replace")


def running_sandbox(pool, marker: str) -> Path | None:
    """The sandbox of the running job that holds the file ``marker``."""
    execute = Path(pool["config"].param("EXECUTE"))
    for entry in execute.iterdir():
        if entry.name.startswith("dir_") and (entry / marker).exists():
            return entry
    return None


def test_a_job_runs_as_its_owner_and_reaches_nothing_private(root_pool, local_user, submit_dir):
    """The owner's uid; the key, the tokens, the execute directory's listing and another
    job's sandbox are all refused."""
    # another job, of root's (so it runs as nobody), holding a secret in its sandbox
    other_dir = submit_dir()
    (other_dir / "secret.txt").write_text("the other job's secret\n")
    submit(root_pool["env"], other_dir, "executable = /bin/sleep\narguments = 120\n"
           "transfer_input_files = secret.txt\nrequest_memory = 64M\nqueue\n")
    other = wait_for(lambda: running_sandbox(root_pool, "secret.txt"), seconds=60)
    assert other.stat().st_uid == NOBODY_UID and other.stat().st_mode & 0o777 == 0o700
    mine = submit_dir(local_user)
    (mine / "probe.sh").write_text(PROBE.format(
        key=root_pool["config"].param("SEC_TOKEN_POOL_SIGNING_KEY_FILE"),
        daemon_token=root_pool["dir"] / "tokens" / "daemon", user_token=root_pool["dir"] / "tokens" / "user",
        execute=root_pool["config"].param("EXECUTE"), other=other))
    (mine / "probe.sh").chmod(0o755)
    env = token_env(root_pool, local_user.pw_name, mine)
    submit(env, mine, f'executable = probe.sh\noutput = probe.out\nerror = probe.err\n'
           'request_memory = 64M\nqueue\n')
    report = wait_for(lambda: "done" in _text(mine / "probe.out") and _text(mine / "probe.out"), seconds=90)
    found = dict(line.split(":", 1) for line in report.split() if ":" in line)
    assert found["uid"] == str(local_user.pw_uid), report
    for probe in ("key", "daemon_token", "user_token", "execute_list", "other_sandbox", "other_secret"):
        assert found[probe] == "refused", (probe, report)
    assert f"runs as {local_user.pw_name} (uid {local_user.pw_uid})" in startd_log(root_pool)
    roost(root_pool["env"], "rm", "-all", check=False)


def test_an_owner_without_a_local_account_runs_as_nobody(root_pool, tmp_path, submit_dir):
    """ghost_<hex> has a token but no account on this host: its job runs as nobody."""
    ghost = f"ghost_{secrets.token_hex(3)}"
    where = submit_dir()
    submit(token_env(root_pool, ghost, tmp_path), where,
           'executable = /usr/bin/id\narguments = -u\nrequest_memory = 64M\nqueue\n')
    line = wait_for(lambda: re.search(rf"job (\d+)\.0 runs as (\S+) \(uid (\d+)\).*{ghost}", startd_log(root_pool)),
                    seconds=90)
    assert (line.group(2), int(line.group(3))) == ("nobody", NOBODY_UID)


def test_a_job_of_root_runs_as_nobody(root_pool, tmp_path, monkeypatch):
    """The personal pool's own user is root here: its jobs run as nobody, never uid 0."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "job.sub").write_text("executable = /usr/bin/id\narguments = -u\noutput = id.out\n"
                                      "request_memory = 64M\nqueue\n")
    roost(root_pool["env"], "submit", "job.sub")
    uid = wait_for(lambda: _text(tmp_path / "id.out").strip(), seconds=90)
    assert uid == str(NOBODY_UID)


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
