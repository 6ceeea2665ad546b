"""``roost wait`` (condor_wait) by HTCondor's src/condor_tools/wait.cpp: its closing
lines, exit statuses and job-number matching."""

from __future__ import annotations

import pytest

from bindings.cli import wait
from bindings.cli.options import UsageError

SUBMIT = "000 ({c:03d}.{p:03d}.000) 2026-12-03 16:00:00 Job submitted from host: <127.0.0.1:9618>\n...\n"
EXECUTE = "001 ({c:03d}.{p:03d}.000) 2026-12-03 16:00:01 Job executing on host: <127.0.0.1:9620>\n...\n"
TERMINATED = ("005 ({c:03d}.{p:03d}.000) 2026-12-03 16:00:02 Job terminated.\n"
              "\t(1) Normal termination (return value {rv})\n...\n")
ABORTED = "009 ({c:03d}.{p:03d}.000) 2026-12-03 16:00:02 Job was aborted.\n\tvia condor_rm\n...\n"


def _log(tmp_path, *events: tuple[str, int, int]) -> str:
    path = tmp_path / "job.log"
    path.write_text("".join(text.format(c=c, p=p, rv=1) for text, c, p in events))
    return str(path)


def test_all_done_even_when_a_job_failed_or_was_aborted(tmp_path, capsys):
    """wait.cpp main: "All jobs done." and exit 0 once every submitted job has a
    terminate or abort event, whatever its return value."""
    path = _log(tmp_path, (SUBMIT, 7, 0), (SUBMIT, 7, 1), (TERMINATED, 7, 0), (ABORTED, 7, 1))
    assert wait.main([path]) == 0
    assert capsys.readouterr().out == "All jobs done.\n"


def test_time_expired_exits_one(tmp_path, capsys):
    """wait.cpp main: past the -wait stop time it prints "Time expired." and exits 1."""
    path = _log(tmp_path, (SUBMIT, 7, 0))
    assert wait.main(["-wait", "1", path]) == 1
    assert capsys.readouterr().out == "Time expired.\n"


def test_one_job_of_the_log_and_status_lines(tmp_path, capsys):
    """wait.cpp jobnum_matches and -status: only the named job counts; its
    submit/execute/end are printed as "C.P.S submitted" and so on."""
    path = _log(tmp_path, (SUBMIT, 7, 0), (SUBMIT, 7, 1), (EXECUTE, 7, 1), (TERMINATED, 7, 1))
    assert wait.main(["-status", path, "7.1"]) == 0
    assert capsys.readouterr().out == ("7.1.0 submitted\n7.1.0 executing on host <127.0.0.1:9620>\n"
                                       "7.1.0 completed\nAll jobs done.\n")


def test_num_counts_ended_jobs(tmp_path, capsys):
    """wait.cpp -num: satisfied once that many awaited jobs have ended (HTCondor's own spelling)."""
    path = _log(tmp_path, (SUBMIT, 7, 0), (SUBMIT, 7, 1), (TERMINATED, 7, 0))
    assert wait.main(["-num", "1", path]) == 0
    assert capsys.readouterr().out == "Specifed number of jobs (1) done.\n"


def test_wait_zero_reads_the_log_once(tmp_path, capsys):
    """wait.cpp -wait 0: read to the end of the log and stop; a log without the job says so."""
    path = _log(tmp_path, (SUBMIT, 7, 0))
    assert wait.main(["-wait", "0", path, "8"]) == 0
    assert capsys.readouterr().err == "This log does not mention that job!\n"


@pytest.mark.parametrize("argv, message", [
    (["log", "x.y"], "Couldn't understand job number"), (["a", "1", "b"], "Extra argument: b"),
    (["-num", "0", "log"], "-num must be greater than zero"), ([], "name the event log")])
def test_bad_command_lines(argv, message):
    """wait.cpp main: each bad command line is refused naming what is wrong."""
    with pytest.raises(UsageError, match=message):
        wait.parse_arguments(argv)
