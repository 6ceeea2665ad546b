"""condor_q's -attributes with -long/-json and the -af:j qualifier, by the condor_q
manual page (docs/man-pages/condor_q.rst: -attributes, -json, -autoformat[:jlhVr,tng])."""

from __future__ import annotations

import json

import pytest

import classad
from bindings.cli.options import UsageError
from bindings.cli.q import parse_arguments, render
from bindings.cli.status_format import AutoformatOptions, autoformat

ADS = [classad.ClassAd('[ClusterId = 12; ProcId = 0; Owner = "alice"; JobStatus = 1; Cmd = "/bin/sleep"]'),
       classad.ClassAd('[ClusterId = 12; ProcId = 1; Owner = "alice"; JobStatus = 2; Cmd = "/bin/sleep"]')]


def _render(argv: list[str]) -> str:
    return render(parse_arguments(argv), ADS, ADS, "alice", "-- Schedd: x", 0.0)


def test_json_attributes_keeps_only_those_attributes():
    """condor_q -json -attributes A,B: each ad holds only the named attributes (any case)."""
    ads = json.loads(_render(["-json", "-attributes", "owner,JobStatus"]))
    assert ads == [{"Owner": "alice", "JobStatus": 1}, {"Owner": "alice", "JobStatus": 2}]


def test_long_attributes_and_long_json_together():
    """-long -attributes prints only those attributes; -long with -json (either order) is JSON."""
    assert _render(["-long", "-attributes", "ProcId"]) == "ProcId = 0\n\nProcId = 1\n\n"
    for argv in (["-long", "-json"], ["-json", "-long"]):
        assert json.loads(_render([*argv, "-attributes", "ProcId"])) == [{"ProcId": 0}, {"ProcId": 1}]


def test_attributes_needs_names():
    """-attributes with only commas names nothing and is refused."""
    with pytest.raises(UsageError, match="-attributes needs"):
        parse_arguments(["-json", "-attributes", ","])


def test_af_j_puts_the_job_id_first():
    """-af:j: ClusterId.ProcId is the first field of each line; with h it is headed ID."""
    assert _render(["-af:j", "Owner", "JobStatus"]) == "12.0 alice 1\n12.1 alice 2\n"
    assert autoformat(ADS, ["Owner"], AutoformatOptions.parse("jh")).splitlines() == ["ID   Owner", "12.0 alice",
                                                                                       "12.1 alice"]
    assert autoformat(ADS[:1], ["Owner"], AutoformatOptions.parse("jl,")) == "ID = 12.0,Owner = alice\n"
