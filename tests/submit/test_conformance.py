"""Replays every case of tests/conformance/submit/cases.jsonl through ``bindings.Submit``
and compares the job ads, attribute by attribute, with what HTCondor produced."""

from __future__ import annotations

import json
import os
import pathlib
import warnings

import pytest

from bindings.submit import Submit
from classad.values import UNDEFINED

CASES_FILE = pathlib.Path(__file__).parents[1] / "conformance" / "submit" / "cases.jsonl"
CASES = [json.loads(line) for line in CASES_FILE.read_text().splitlines() if line.strip()]
ENVIRONMENT = {
    "CONDOR_CONFIG": "/dev/null", "PATH": "/usr/bin:/bin", "HOME": "/home/submitter",
    "LANG": "C.UTF-8", "TZ": "UTC", "CORPUS_ALPHA": "first", "CORPUS_BETA": "two words",
    "CORPUS_PATH": "/data/corpus", "SCRATCH_AREA": "/scratch/area51",
}
DROPPED = {"qdate", "enteredcurrentstatus", "condorversion", "condorplatform",
           "filesystemdomain", "uiddomain"}


def write_files(root: pathlib.Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)


def encoded(ad, name: str, cwd: str) -> object:
    """An attribute in the corpus's JSON form, with the working directory tokenised."""
    value = ad[name]
    if value is UNDEFINED:
        return {"undefined": True}
    if isinstance(value, (bool, int, float, str)):
        return value.replace(cwd, "${CWD}") if isinstance(value, str) else value
    return {"expr": str(ad.lookup(name)).replace(cwd, "${CWD}")}


def replay(case: dict, cwd: str) -> dict:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ads = Submit(case["submit"]).jobs(clusterid=case["cluster_id"], qdate=1700000000,
                                             owner="alice")
    except ValueError:
        return {"error": True}
    jobs = [{name: encoded(ad, name, cwd) for name in ad.keys() if name.lower() not in DROPPED}
            for ad in ads]
    return {"error": False, "jobs": jobs}


def differences(expected: dict, got: dict) -> list[str]:
    want = {k.lower(): (k, v) for k, v in expected.items()}
    have = {k.lower(): (k, v) for k, v in got.items()}
    out = []
    for key in sorted(want.keys() | have.keys()):
        a, b = want.get(key), have.get(key)
        if a is None:
            out.append(f"unexpected {b[0]} = {b[1]!r}")
        elif b is None:
            out.append(f"missing {a[0]} = {a[1]!r}")
        elif a[1] != b[1] or type(a[1]) is not type(b[1]):
            out.append(f"{a[0]}: expected {a[1]!r}, got {b[1]!r}")
    return out


def as_param(case: dict):
    """``case`` as a parameter, marked integration if its queue statement runs a command."""
    marks = [pytest.mark.integration] if case["area"] == "queue-from-command" else []
    return pytest.param(case, id=case["id"], marks=marks)


@pytest.mark.parametrize("case", [as_param(case) for case in CASES])
def test_case_matches_htcondor(case, tmp_path, monkeypatch):
    for name in list(os.environ):
        monkeypatch.delenv(name)
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    root = pathlib.Path(os.path.realpath(tmp_path))
    write_files(root, case["files"])
    monkeypatch.chdir(root)
    result = replay(case, str(root))
    expected = case["expect"]
    assert result["error"] == expected["error"], (
        "HTCondor refused this description" if expected["error"] else "HTCondor accepted it")
    if expected["error"]:
        return
    assert len(result["jobs"]) == len(expected["jobs"])
    for index, (want, got) in enumerate(zip(expected["jobs"], result["jobs"])):
        assert differences(want, got) == [], f"proc {index}"
