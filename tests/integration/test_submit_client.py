"""On a real personal pool: the forms that need the submitter's machine (include,
$ENV, queue ... from a file or a command, queue ... matching) are expanded by
`roost submit` and the bindings, as the user, while the schedd itself refuses them;
counts and empty item lists are refused before any job exists."""

from __future__ import annotations

import time

import pytest

import bindings as htcondor
from bindings.pool import find_pool, pool_token
from daemoncore.wire import schedd_routes as api
from daemoncore.wire.blocking_client import BlockingClient
from daemoncore.wire.errors import RemoteError
from schedd.submit import SubmitError
from tests.integration.conftest import roost

#: Jobs stay idle: no startd, so the test reads the ads the schedd stored.
POOL_DAEMON_LIST = "MASTER, COLLECTOR, SCHEDD"


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _args(schedd, cluster: int) -> list[str]:
    return [ad["Args"] for ad in schedd.query(f"ClusterId == {cluster}", ["ProcId", "Args"])]


def test_roost_submit_expands_include_env_files_commands_and_globs_here(pool, workdir):
    (workdir / "common.sub").write_text("executable = /bin/echo\nrequest_memory = 16M\n")
    (workdir / "params.txt").write_text("a 1\nb 2\n")
    (workdir / "items.sh").write_text("#!/bin/sh\ntouch ran-here\necho p\necho q\n")
    (workdir / "items.sh").chmod(0o755)
    (workdir / "x.dat").touch()
    (workdir / "job.sub").write_text(
        "include : common.sub\narguments = $(alpha) $(beta) $ENV(SWEEP_TAG)\nqueue alpha, beta from params.txt\n"
        "arguments = m $(f)\nqueue f matching *.dat\narguments = c $(x)\nqueue x from ./items.sh |\n")
    env = {**pool["env"], "SWEEP_TAG": "t$1"}
    done = roost(env, "submit", "job.sub")
    assert "5 job(s) submitted to cluster" in done.stdout
    cluster = int(done.stdout.strip().rsplit(" ", 1)[1].rstrip("."))
    assert _args(htcondor.Schedd(), cluster) == ["a 1 t$1", "b 2 t$1", "m x.dat", "c p", "c q"]
    assert (workdir / "ran-here").exists()


def test_bindings_submit_sends_item_files_inline(pool, workdir):
    (workdir / "words.txt").write_text("alpha\nbeta\ngamma\n")
    result = htcondor.Schedd().submit(htcondor.Submit(
        "executable = /bin/echo\narguments = $(Item) $(ItemIndex)\nqueue from [1:] words.txt\n"))
    assert result.num_procs() == 2
    assert _args(htcondor.Schedd(), result.cluster()) == ["beta 1", "gamma 2"]


def test_the_schedd_itself_refuses_a_command_and_runs_nothing(pool, workdir):
    """Straight to the route, as an attacker would: a 400, and the command never ran."""
    marker = workdir / "pwned"
    client = BlockingClient(htcondor.Schedd().address, token=pool_token(find_pool(None)))
    with pytest.raises(RemoteError) as caught:
        client.call(api.SUBMIT, {"description": f"executable = /bin/true\nqueue x from /usr/bin/touch {marker} |\n",
                                 "iwd": str(workdir)})
    assert caught.value.status == 400 and "line 2" in caught.value.message and "runs a command" in caught.value.message
    assert not marker.exists()


def test_an_empty_itemdata_raises_and_submits_nothing(pool, workdir):
    """htcondor2 raises on an empty item list (next() of an empty iterator); so do we, clearly."""
    schedd = htcondor.Schedd()
    before = len(schedd.query("true", ["ClusterId"]))
    with pytest.raises(ValueError, match="itemdata is empty"):
        schedd.submit(htcondor.Submit("executable = /bin/true\nqueue\n"), itemdata=[])
    assert len(schedd.query("true", ["ClusterId"])) == before


def test_a_billion_jobs_are_refused_at_once(pool, workdir):
    started = time.monotonic()
    with pytest.raises(RemoteError, match="more than the 1000000"):
        htcondor.Schedd().submit(htcondor.Submit("executable = /bin/true\nqueue 1000000000\n"))
    with pytest.raises(SubmitError, match="more than the 1000000"):
        htcondor.Schedd().submit(htcondor.Submit("executable = /bin/true\nqueue 1000000000 x from (\na\n)\n"
                                                 "queue y from /dev/null\n"))
    assert time.monotonic() - started < 5.0


def test_roost_submit_names_the_included_file_and_line_without_echoing_it(pool, workdir):
    (workdir / "secret.txt").write_text("hunter2 is the password\n")
    (workdir / "job.sub").write_text("executable = /bin/true\ninclude : secret.txt\nqueue x from (\na\n)\n")
    done = roost(pool["env"], "submit", "job.sub", check=False)
    assert done.returncode == 1
    assert "secret.txt, line 1" in done.stderr and "hunter2" not in done.stderr
