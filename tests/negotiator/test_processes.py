"""Runs the real-process negotiator cases (negotiator_process_cases.py) in a separate
pytest process, because they need the global reactor running in a thread and no other
test may share a process with that."""

import pathlib
import subprocess
import sys

CASES = pathlib.Path(__file__).with_name("negotiator_process_cases.py")
ROOT = pathlib.Path(__file__).parents[2]


def test_real_collector_and_negotiator_processes_match_and_report_priorities():
    """A real collector and negotiator match a schedd's jobs, keep the accountant, and
    answer userprio (every case of negotiator_process_cases.py passes)."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(CASES),
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "--noconftest"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert done.stdout.count(".") >= 2, "the process cases did not run"
