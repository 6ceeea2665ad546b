"""`roost submit FILE --dry-run` prints the job ads with no pool running."""

from __future__ import annotations

import json

import classad
from bindings.cli import main


def test_dry_run_prints_old_syntax_ads_one_per_proc(tmp_path, monkeypatch, capsys):
    (tmp_path / "job.sub").write_text("executable = /bin/echo\narguments = $(Process)\nqueue 2\n")
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "job.sub", "--dry-run"]) == 0
    ads = list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))
    assert [ad["ProcId"] for ad in ads] == [0, 1]
    assert ads[1]["Args"] == "1" and ads[0]["Iwd"] == str(tmp_path)


def test_dry_run_json_is_a_list_of_ads(tmp_path, monkeypatch, capsys):
    (tmp_path / "job.sub").write_text("executable = /bin/true\nrequest_memory = 1G\nqueue\n")
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "job.sub", "-dry-run", "-json"]) == 0
    [ad] = json.loads(capsys.readouterr().out)
    assert ad["RequestMemory"] == 1024 and ad["Cmd"] == "/bin/true"


def test_a_bad_file_names_the_file_and_line_and_exits_1(tmp_path, monkeypatch, capsys):
    (tmp_path / "bad.sub").write_text("executable = /bin/true\nrequest_memory = 12XB\nqueue\n")
    monkeypatch.chdir(tmp_path)
    assert main(["submit", "bad.sub", "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "bad.sub" in err and "line 2" in err and "request_memory" in err
