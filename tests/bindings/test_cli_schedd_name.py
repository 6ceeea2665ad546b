"""`-name NAME` on the schedd commands asks the schedd the collector knows by that
name (it used to be accepted and ignored), and says so when there is none."""

from __future__ import annotations

import pytest

from tests.integration.conftest import personal_pool, roost

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    with personal_pool(tmp_path_factory.mktemp("home")) as running:
        yield running


def test_q_and_rm_reach_the_schedd_of_that_name(pool, tmp_path):
    """roost q -name and roost rm -name find the schedd through the collector."""
    (tmp_path / "job.sub").write_text("executable = /bin/sleep\narguments = 300\nqueue\n")
    roost(pool["env"], "submit", str(tmp_path / "job.sub"))
    name = roost(pool["env"], "status", "-schedd", "-af", "Name").stdout.strip()
    assert name
    listed = roost(pool["env"], "q", "-name", name, "-af", "ClusterId", "Cmd").stdout
    assert "/bin/sleep" in listed
    assert "marked for removal" in roost(pool["env"], "rm", "-name", name, "-all").stdout


@pytest.mark.parametrize("command", [["q"], ["rm", "-all"], ["qedit", "1", "JobPrio", "2"],
                                     ["q", "-better-analyze"]], ids=" ".join)
def test_an_unknown_schedd_name_is_refused_with_a_clear_message(pool, command):
    """A name the collector does not know is an error naming it, not a silent fallback."""
    done = roost(pool["env"], command[0], "-name", "nosuch@nowhere", *command[1:], check=False)
    assert done.returncode == 1
    assert "unable to locate a Schedd daemon named 'nosuch@nowhere'" in done.stderr
