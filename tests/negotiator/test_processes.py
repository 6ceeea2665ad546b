"""Runs the real-process negotiator cases (negotiator_process_cases.py) in a separate
pytest process, because they need the global reactor running in a thread and no other
test may share a process with that."""

import ast
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

pytestmark = pytest.mark.integration  # starts a pytest running real daemons

CASES = pathlib.Path(__file__).with_name("negotiator_process_cases.py")
ROOT = pathlib.Path(__file__).parents[2]


def case_names() -> set[str]:
    """The test functions negotiator_process_cases.py defines."""
    tree = ast.parse(CASES.read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}


def passed_cases(report: pathlib.Path) -> set[str]:
    """The names of the cases a JUnit XML report records as passed (no failure,
    error or skip inside the testcase element)."""
    cases = ElementTree.parse(report).getroot().iter("testcase")
    return {case.get("name") for case in cases if not any(child.tag in ("failure", "error", "skipped")
                                                          for child in case)}


def test_real_collector_and_negotiator_processes_match_and_report_priorities(tmp_path):
    """A real collector and negotiator match a schedd's jobs, keep the accountant, and
    answer userprio (every case of negotiator_process_cases.py passes)."""
    report = tmp_path / "cases.xml"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(CASES),
                           "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT), "--noconftest",
                           f"--junitxml={report}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    expected = case_names()
    assert len(expected) >= 2, "negotiator_process_cases.py lost its cases"
    assert passed_cases(report) == expected, done.stdout[-4000:]
