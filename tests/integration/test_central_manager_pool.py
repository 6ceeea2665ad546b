"""`roost pool up -role central-manager,...` starts a pool meant for the network: it
makes the pool CA, serves every daemon over TLS on the chosen address with the
collector on 9618, remembers its roles across restarts, and the CLI on that host
reaches it with no configuration of its own."""

from __future__ import annotations

import http.client
import json
import os
import stat

import pytest

from tests.integration.conftest import isolated_env, roost
from tests.support.waiting import wait_for

pytestmark = pytest.mark.integration

ROLES = "central-manager,submit,execute"


@pytest.fixture(scope="module")
def central_manager(tmp_path_factory):
    """A central manager that also submits and runs jobs, on 127.0.0.1."""
    home = tmp_path_factory.mktemp("cm")
    env = {**isolated_env(home), "_ROOST_NUM_CPUS": "1"}
    directory = home / "pool"
    try:
        up = roost(env, "pool", "up", "-dir", str(directory), "-role", ROLES, "-interface", "127.0.0.1")
        yield {"env": env, "dir": directory, "home": home, "up": up.stdout}
    finally:
        roost(env, "pool", "down", "-dir", str(directory), check=False)


def test_it_serves_tls_on_9618_and_says_how_to_add_hosts(central_manager):
    """The collector is at 9618 over TLS, and `pool up` says how hosts join."""
    assert "collector at 127.0.0.1:9618?tls=1" in central_manager["up"]
    assert "roost pool join-token --role execute" in central_manager["up"]
    config = (central_manager["dir"] / "config").read_text()
    assert "use ROLE : CentralManager, Submit, Execute" in config and "AUTH_SSL_SERVER_CERTFILE" in config


def test_the_ca_and_host_keys_are_private(central_manager):
    """The CA key and the host key are readable by their owner only."""
    keys = central_manager["dir"] / "passwords.d"
    for name in ("pool_ca.key", "host.key"):
        assert stat.S_IMODE(os.stat(keys / name).st_mode) == 0o600, name


def test_plain_http_to_the_collector_is_refused(central_manager):
    """A plain-HTTP request to the collector's TLS port gets a 400 saying to use https."""
    connection = http.client.HTTPConnection("127.0.0.1", 9618, timeout=10)
    try:
        connection.request("GET", "/v1/ping")
        answer = connection.getresponse()
        body = answer.read().decode()
    finally:
        connection.close()
    assert answer.status == 400 and "https://" in body


def test_the_cli_on_the_host_reaches_every_daemon_and_runs_a_job(central_manager, tmp_path):
    """`roost status -master` and a job go through TLS with no client configuration."""
    env = central_manager["env"]
    masters = roost(env, "status", "-master", "-af", "DaemonList").stdout
    assert "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD" in masters
    (tmp_path / "job.sub").write_text("executable = /bin/echo\narguments = over tls\noutput = out.txt\n"
                                      "log = job.log\nshould_transfer_files = YES\nqueue\n")
    tmp_path.chmod(0o755)
    done = subprocess_in(env, tmp_path, "submit", "job.sub")
    assert done.returncode == 0, done.stderr
    wait_for(lambda: (tmp_path / "out.txt").exists() and (tmp_path / "out.txt").read_text() == "over tls\n",
             120, "the job's output coming back")


def test_the_roles_are_remembered_across_restarts(central_manager):
    """`roost pool up` without -role on that directory starts the central manager again."""
    env, directory = central_manager["env"], central_manager["dir"]
    roost(env, "pool", "down", "-dir", str(directory))
    again = roost(env, "pool", "up", "-dir", str(directory)).stdout
    assert "collector at 127.0.0.1:9618?tls=1" in again
    assert json.loads((directory / "roles.json").read_text())["roles"] == ROLES


def test_a_role_other_than_central_manager_is_refused(tmp_path):
    """Submit and execute hosts join a pool: `pool up -role execute` says so and starts nothing."""
    env = isolated_env(tmp_path)
    done = roost(env, "pool", "up", "-dir", str(tmp_path / "pool"), "-role", "execute", check=False)
    assert done.returncode == 1 and "roost pool join" in done.stderr
    assert not (tmp_path / "pool" / "pool.json").exists()


def subprocess_in(env, cwd, *args):
    """`roost ARGS` run in ``cwd``."""
    import subprocess

    from tests.integration.conftest import ROOST
    return subprocess.run([*ROOST, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
