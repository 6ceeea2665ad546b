"""What `roost q -l`, `roost status -l` and `roost history -l` print on a real pool
is read by HTCondor's own classad2 parser (ParserType.Old) to the same attributes
and expressions Roost's reader gets: scripts that feed Roost's long form to
HTCondor's tools, or the other way round, see the same ads."""

from __future__ import annotations

import classad
from classad.unparse import unparse_expr
from tests.integration.conftest import roost
from tests.integration.test_jobs_files import submitted_cluster
from tests.support.htcondor_baseline import htcondor_python, read_old_with_classad2
from tests.support.waiting import wait_for

JOB = """executable = /bin/echo
arguments = "quoted ""words"" and a 'single' one"
environment = "A=1 B='two words'"
+Note = "tab\\there, backslash \\\\ end"
+Ratio = 0.125
request_memory = 64M
queue
"""
HELD = """executable = /bin/sleep
arguments = 600
hold = true
+JobBatchName = "long form"
queue
"""


def _canonical(ad) -> dict:
    return {name.lower(): unparse_expr(ad.lookup(name).node) for name in ad}


def _same_with_both_readers(text: str) -> int:
    """Assert HTCondor's reader and Roost's read ``text`` to the same ads; how many."""
    ours = [_canonical(ad) for ad in classad.parseAds(text, classad.ParserType.Old)]
    assert ours, "nothing printed"
    assert read_old_with_classad2(text) == ours
    return len(ours)


def test_q_status_and_history_long_forms_read_the_same_with_classad2(pool, tmp_path, monkeypatch):
    htcondor_python()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "echo.sub").write_text(JOB)
    (tmp_path / "held.sub").write_text(HELD)
    done = submitted_cluster(roost(pool["env"], "submit", "echo.sub"))
    held = submitted_cluster(roost(pool["env"], "submit", "held.sub"))
    assert _same_with_both_readers(roost(pool["env"], "q", "-l", str(held)).stdout) == 1
    assert _same_with_both_readers(roost(pool["env"], "status", "-l").stdout) >= 1
    wait_for(lambda: roost(pool["env"], "history", "-l", str(done)).stdout.strip(), 90,
             "the echo job in the history")
    assert _same_with_both_readers(roost(pool["env"], "history", "-l", str(done)).stdout) == 1
