"""``roost submit``'s checks before anything is sent, and its command-line forms, each
from condor_submit's rule (docs/man-pages/condor_submit.rst; src/condor_utils/
submit_utils.cpp ``SetExecutable``/``SetStdin``/``SetTransferFiles``/``SetUserLog``
with ``check_open``; src/condor_submit.V6/submit.cpp for unused commands, stdin and
``-dry-run``). All run with ``-dry-run``, which checks exactly as a real submit does."""

from __future__ import annotations

import io
import os

import pytest

import classad
from bindings.cli import main
from bindings.cli.submit import split_dry_run_file


def _submit_file(tmp_path, monkeypatch, text, name="job.sub"):
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return name


def test_a_missing_executable_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    """SetExecutable: a transferred executable that does not exist stops the submit, naming it."""
    name = _submit_file(tmp_path, monkeypatch, "executable = no_such_prog\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 1
    captured = capsys.readouterr()
    assert f"{tmp_path}/no_such_prog" in captured.err and "does not exist" in captured.err
    assert captured.out == ""


def test_an_executable_not_transferred_is_not_looked_for(tmp_path, monkeypatch, capsys):
    """transfer_executable = false: the program is on the execute side, submit does not check it."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /opt/elsewhere/prog\ntransfer_executable = false\n"
                                               "queue\n")
    assert main(["submit", name, "-dry-run"]) == 0


def test_missing_input_and_transfer_input_files_are_refused(tmp_path, monkeypatch, capsys):
    """SetStdin and SetTransferFiles: ``input`` and each local transfer_input_files entry must
    exist relative to initialdir; URLs are not checked."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/cat\ninput = in.txt\n"
                                               "transfer_input_files = data.csv, https://example.org/x\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 1
    err = capsys.readouterr().err
    assert f"input file '{tmp_path}/in.txt' does not exist" in err
    assert f"'{tmp_path}/data.csv'" in err and "example.org" not in err
    (tmp_path / "in.txt").write_text("x")
    (tmp_path / "data.csv").write_text("x")
    assert main(["submit", name, "-dry-run"]) == 0


def test_skip_filechecks_turns_the_file_checks_off(tmp_path, monkeypatch):
    """condor_submit manual, skip_filechecks: no check of the files at submit."""
    name = _submit_file(tmp_path, monkeypatch, "executable = ./later\nskip_filechecks = true\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 0


def test_a_crlf_script_is_refused_with_a_dos2unix_hint(tmp_path, monkeypatch, capsys):
    """SetExecutable: a #! script whose first line ends in CRLF is refused, suggesting dos2unix;
    -allow-crlf-script lets it through."""
    (tmp_path / "run.sh").write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    name = _submit_file(tmp_path, monkeypatch, "executable = run.sh\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 1
    err = capsys.readouterr().err
    assert "CRLF" in err and f"dos2unix {tmp_path}/run.sh" in err
    assert main(["submit", name, "-dry-run", "-allow-crlf-script"]) == 0
    (tmp_path / "run.sh").write_bytes(b"#!/bin/sh\necho hi\r\n")
    assert main(["submit", name, "-dry-run"]) == 0


def test_an_unwritable_log_is_an_invalid_log_file(tmp_path, monkeypatch, capsys):
    """SetUserLog: a log that cannot be opened for writing is 'Invalid log file'; nothing is created."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/true\nlog = nodir/job.log\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 1
    err = capsys.readouterr().err
    assert f"Invalid log file '{tmp_path}/nodir/job.log'" in err and "does not exist" in err
    (tmp_path / "adir").mkdir()
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/true\nlog = adir\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 1
    assert "is a directory" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "nodir")


def test_unused_commands_are_warned_about_with_a_suggestion(tmp_path, monkeypatch, capsys):
    """submit.cpp: a line no submit command uses and no $() refers to is warned about on
    stderr (it may be a typo); a macro used by another command and +attributes are not."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\nrequst_memory = 2G\nsize = 7\n"
                                               "arguments = $(size)\n+Project = \"x\"\nflavour = mint\nqueue\n")
    assert main(["submit", name, "-dry-run"]) == 0
    err = capsys.readouterr().err
    assert f"{name}, line 2: 'requst_memory = 2G'" in err and "did you mean 'request_memory'?" in err
    assert "line 6: 'flavour = mint'" in err
    assert "size" not in err and "Project" not in err
    assert err.count("requst_memory") == 2  # one warning (it names the command twice), not two


def test_the_description_comes_from_standard_input(tmp_path, monkeypatch, capsys):
    """condor_submit.rst: with no file, or ``-``, the description is read from standard input."""
    monkeypatch.chdir(tmp_path)
    for argv in (["submit", "-dry-run"], ["submit", "-", "-dry-run"]):
        monkeypatch.setattr("sys.stdin", io.StringIO("executable = /bin/true\nqueue 2\n"))
        assert main(argv) == 0
        ads = list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))
        assert [ad["ProcId"] for ad in ads] == [0, 1]


def test_dry_run_writes_to_the_file_it_names(tmp_path, monkeypatch, capsys):
    """condor_submit.rst: ``-dry-run FILE`` writes there, ``-`` to standard output; a lone
    description after -dry-run is read, never overwritten."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/true\nqueue\n")
    assert main(["submit", "-dry-run", "ads.txt", name]) == 0
    [ad] = classad.parseAds((tmp_path / "ads.txt").read_text(), classad.ParserType.Old)
    assert ad["Cmd"] == "/bin/true" and capsys.readouterr().out == ""
    assert main(["submit", "-dry-run", "-", name]) == 0
    assert 'Cmd = "/bin/true"' in capsys.readouterr().out
    assert main(["submit", "-dry-run", name]) == 0
    assert 'Cmd = "/bin/true"' in capsys.readouterr().out
    assert (tmp_path / name).read_text() == "executable = /bin/true\nqueue\n"


def test_split_dry_run_file_takes_only_a_word_or_a_dash():
    """An option after -dry-run is no file."""
    assert split_dry_run_file(["-dry-run", "-json", "a.sub"]) == (["-dry-run", "-json", "a.sub"], None)
    assert split_dry_run_file(["a.sub", "-dry-run", "-"]) == (["a.sub", "-dry-run"], "-")
    assert split_dry_run_file(["a.sub", "-dry-run"]) == (["a.sub", "-dry-run"], None)


def test_interactive_is_refused_clearly(tmp_path, monkeypatch, capsys):
    """condor_submit -interactive has no Roost counterpart: refused saying so, nothing submitted."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/true\nqueue\n")
    assert main(["submit", "-interactive", name]) == 2
    assert "-interactive is not supported" in capsys.readouterr().err


def test_append_several_times_and_queue_from_the_command_line(tmp_path, monkeypatch, capsys):
    """condor_submit.rst, -append and -queue: each -append adds a command before the queue
    statement, and -queue ARGS gives the queue statement of a file that has none."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\n")
    assert main(["submit", name, "-dry-run", "-append", "arguments = $(Process)", "-a", "priority = 5",
                 "-queue", "3"]) == 0
    ads = list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))
    assert [(ad["Args"], ad["JobPrio"]) for ad in ads] == [("0", 5), ("1", 5), ("2", 5)]


def test_queue_conflicting_with_the_files_queue_statement_is_refused(tmp_path, monkeypatch, capsys):
    """submit.cpp submit_jobs: a -queue argument and a queue statement in the file are an
    error ("-queue argument conflicts with queue statement in submit file"), nothing submitted."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\nqueue 2\n")
    assert main(["submit", name, "-dry-run", "-queue", "3"]) == 1
    captured = capsys.readouterr()
    assert "-queue argument conflicts with queue statement in submit file" in captured.err
    assert f"{name}, line 2" in captured.err and captured.out == ""


def test_queue_takes_every_word_up_to_the_next_option(tmp_path, monkeypatch, capsys):
    """condor_submit.rst, -queue: its arguments end at the end of the line or at a word
    starting with a dash, so `-queue x in A B -dry-run` queues the items A and B."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\narguments = $(x)\n")
    assert main(["submit", name, "-queue", "x", "in", "A", "B", "-dry-run"]) == 0
    ads = list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))
    assert [ad["Args"] for ad in ads] == ["A", "B"]


def test_an_appended_queue_statement_is_the_queue_argument(tmp_path, monkeypatch, capsys):
    """condor_submit.rst, -append: an appended queue command is taken as -queue, and
    submit.cpp allows only one ("only one -queue command allowed")."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\n")
    assert main(["submit", name, "-dry-run", "-a", "queue 2"]) == 0
    assert len(list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))) == 2
    assert main(["submit", name, "-dry-run", "-a", "queue 2", "-queue", "3"]) == 2
    assert "only one -queue" in capsys.readouterr().err


def test_queue_without_arguments_is_a_usage_error(tmp_path, monkeypatch, capsys):
    """submit.cpp: "-queue requires at least one argument" (the next word is an option)."""
    name = _submit_file(tmp_path, monkeypatch, "executable = /bin/echo\n")
    assert main(["submit", name, "-queue", "-dry-run"]) == 2
    assert "-queue needs queue arguments" in capsys.readouterr().err


def test_commands_and_queue_on_the_command_line_need_no_file(tmp_path, monkeypatch, capsys):
    """submit.cpp main (NoCmdFileNeeded): with commands and a queue statement on the
    command line, no submit file is read, not even standard input."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("this is not read\n"))
    assert main(["submit", "-dry-run", "-a", "executable = /bin/true", "-queue", "2"]) == 0
    ads = list(classad.parseAds(capsys.readouterr().out, classad.ParserType.Old))
    assert [ad["ProcId"] for ad in ads] == [0, 1] and ads[0]["Cmd"] == "/bin/true"


def _expanded_and_ads(tmp_path, monkeypatch, text):
    from bindings.cli.submit_checks import expanded_jobs
    from bindings.submit import Submit
    from schedd.submit import to_classads

    monkeypatch.chdir(tmp_path)
    clusters = Submit(text).clusters(clusterid=7, owner="someone")
    return list(expanded_jobs(clusters)), list(to_classads(clusters))


def test_the_expansion_is_checked_as_its_job_ads_are(tmp_path, monkeypatch):
    """file_problems reads a description's expansion (ExpandedJob) exactly as its ClassAds,
    expression-valued attributes included."""
    from bindings.cli.submit_checks import file_problems

    (tmp_path / "here.txt").write_text("x")
    texts = ["executable = no_such_prog\ninput = missing.in\nlog = /no/dir/job.log\nqueue 2\n",
             "executable = /bin/true\ntransfer_input_files = here.txt, gone_$(Process).txt\nqueue 3\n",
             "executable = /bin/true\ninput = $(Item)\nqueue Item in (here.txt, nothing.txt)\n",
             "executable = /bin/true\nMY.TransferIn = 1 == 2\ninput = missing.in\nqueue\n",
             "executable = /bin/true\ntransfer_executable = false\nqueue\n"]
    for text in texts:
        expanded, ads = _expanded_and_ads(tmp_path, monkeypatch, text)
        assert file_problems(expanded) == file_problems(ads), text
        for job, ad in zip(expanded, ads):
            for name in ("Cmd", "In", "TransferIn", "TransferInput", "UserLog", "Iwd", "TransferExecutable"):
                assert (name in job) == (name in ad)
                if name in ad:
                    assert job.evaluate(name) == ad.evaluate(name), (text, name)


@pytest.mark.integration
def test_a_plain_submit_loads_no_classad_library(tmp_path):
    """Expanding and checking a plain description, as ``roost submit`` does before sending
    it, loads neither the ClassAd library nor lark."""
    import subprocess
    import sys

    code = ("import sys\nfrom bindings.submit import Submit\n"
            "from bindings.cli.submit_checks import expanded_jobs, file_problems\n"
            "clusters = Submit('executable = /bin/sleep\\narguments = 60\\nrequest_memory = 64M\\nqueue 2\\n')"
            ".clusters()\n"
            "assert file_problems(expanded_jobs(clusters)) == []\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('classad', 'lark')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            cwd=tmp_path).stdout
    assert loaded.strip() == "[]"
