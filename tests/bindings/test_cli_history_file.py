"""condor_history -file, -forwards, -match and -long -json, by the condor_history manual
page (docs/man-pages/condor_history.rst) and its history-file form (each ad closed by a
``***`` banner line, oldest first in the file, shown newest first)."""

from __future__ import annotations

import json

import pytest

from bindings.cli.history import main, parse_arguments

HISTORY = "".join(
    f'ClusterId = {cluster}\nProcId = 0\nOwner = "{owner}"\nJobStatus = 4\nQDate = 1700000000\n'
    f'*** ProcId = 0 ClusterId = {cluster} Owner = "{owner}" CompletionDate = 1700000100\n'
    for cluster, owner in ((1, "alice"), (2, "bob"), (3, "alice")))


@pytest.fixture
def history_file(tmp_path):
    path = tmp_path / "history"
    path.write_text(HISTORY)
    return str(path)


def _clusters(capsys) -> list[str]:
    return capsys.readouterr().out.split()


def test_file_is_read_newest_first(history_file, capsys):
    """-file FILE reads that history file instead of the schedd's; newest (last written) first."""
    assert main(["-file", history_file, "-af", "ClusterId"]) == 0
    assert _clusters(capsys) == ["3", "2", "1"]


def test_forwards_and_match(history_file, capsys):
    """-forwards reads oldest first; -match N stops after N matching jobs."""
    assert main(["-file", history_file, "-forwards", "-match", "2", "-af", "ClusterId"]) == 0
    assert _clusters(capsys) == ["1", "2"]
    assert main(["-file", history_file, "-match", "1", "alice", "-af", "ClusterId"]) == 0
    assert _clusters(capsys) == ["3"]


def test_long_json_is_json_with_attributes(history_file, capsys):
    """-long -json prints the ads as JSON; -attributes keeps only the named ones."""
    assert main(["-file", history_file, "-long", "-json", "-attributes", "ClusterId,Owner", "-match", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"ClusterId": 3, "Owner": "alice"}]


def test_a_broken_file_is_one_line_naming_it(tmp_path, capsys):
    """An ad that does not parse is reported with the file and ad number, status 1."""
    path = tmp_path / "history"
    path.write_text("ClusterId = = 1\n*** ClusterId = 1\n")
    assert main(["-file", str(path)]) == 1
    assert f"{path}: ad 1 does not parse" in capsys.readouterr().err


def test_a_missing_file_is_one_line(tmp_path, capsys):
    """A -file that cannot be read is one error line, status 1."""
    assert main(["-file", str(tmp_path / "nope")]) == 1
    assert "nope" in capsys.readouterr().err


def test_file_needs_its_argument():
    """-file without a file name is a usage error."""
    from bindings.cli.options import UsageError

    with pytest.raises(UsageError, match="-file needs"):
        parse_arguments(["-file"])
