"""``roost config`` (condor_config_val) by HTCondor's src/condor_tools/config_val.cpp
(main's printing of named parameters, -dump, PrintConfigSources) and the manual page
docs/man-pages/condor_config_val.rst."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bindings.cli import run
from bindings.cli.config import main
from bindings.cli.options import CLOSED_OUTPUT_EXIT, CommandLine, run_command


@pytest.fixture
def pool(tmp_path):
    """A ROOST_CONFIG file in a temp dir, with a config.d file."""
    path = tmp_path / "roost.conf"
    path.write_text("use ROLE : Personal\nLOCAL_DIR = /srv/pool\nUPDATE_INTERVAL = 5m\nMAX_JOBS_RUNNING = 50\n")
    (tmp_path / "config.d").mkdir()
    (tmp_path / "config.d" / "10-site").write_text("SCRIPT @=end\na\nb\n@end\n")
    return {"HOME": str(tmp_path), "ROOST_CONFIG": str(path)}, str(path)


def test_a_named_knob_prints_its_bare_value(pool, capsys):
    """config_val.cpp main: without -verbose each value is printed alone, expanded,
    one per line, so `$(condor_config_val LOG)` works in a script."""
    env, _ = pool
    assert main(["update_interval", "LOG"], env) == 0
    assert capsys.readouterr().out == "5m\n/srv/pool/log\n"


def test_htcondor_defaults_of_common_knobs(pool, capsys):
    """The manual's Configuration Macros: MAX_JOBS_RUNNING and the per-daemon logs have
    built-in values; a config file's setting wins over them."""
    env, _ = pool
    assert main(["MAX_JOBS_PER_OWNER", "SCHEDD_LOG", "LOCAL_DIR", "MAX_JOBS_RUNNING"], env) == 0
    assert capsys.readouterr().out.splitlines() == ["100000", "/srv/pool/log/ScheddLog", "/srv/pool", "50"]


def test_verbose_names_the_file_raw_text_and_default(pool, capsys):
    """config_val.cpp main with -verbose: ``NAME = value``, `` # at: FILE, line N``,
    `` # raw: NAME = text``, `` # default: value``, then a blank line."""
    env, path = pool
    assert main(["-verbose", "MAX_JOBS_RUNNING", "LOG"], env) == 0
    assert capsys.readouterr().out.splitlines() == [
        "MAX_JOBS_RUNNING = 50", f" # at: {path}, line 4", " # raw: MAX_JOBS_RUNNING = 50", " # default: 10000", "",
        "LOG = /srv/pool/log", " # at: <Default>", " # raw: LOG = $(LOCAL_DIR)/log", " # default: /srv/pool/log", ""]


def test_raw_and_default_forms(pool, capsys):
    """The man page's -raw (the text right of the ``=``) and -default (the built-in value)."""
    env, _ = pool
    assert main(["-raw", "SCHEDD_LOG"], env) == 0
    assert main(["-default", "MAX_JOBS_RUNNING"], env) == 0
    assert capsys.readouterr().out == "$(LOG)/ScheddLog\n10000\n"


def test_not_defined_goes_to_stderr_and_the_status_is_one(pool, capsys):
    """config_val.cpp main: ``Not defined: NAME`` on stderr, the other names still print, status 1."""
    env, _ = pool
    assert main(["no_such_knob", "UPDATE_INTERVAL"], env) == 1
    captured = capsys.readouterr()
    assert captured.err == "Not defined: NO_SUCH_KNOB\n"
    assert captured.out == "5m\n"


def test_environment_override_is_located(pool, capsys):
    """A ``_ROOST_`` override's -verbose location names its variable."""
    env, _ = pool
    assert main(["-v", "UPDATE_INTERVAL"], {**env, "_ROOST_UPDATE_INTERVAL": "7"}) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "UPDATE_INTERVAL = 7", " # at: from environment variable _ROOST_UPDATE_INTERVAL"]


def test_dump_prints_raw_sorted_knobs_matching_the_patterns(pool, capsys):
    """The man page's -dump: every knob (or those matching *vars*), raw unless -expand;
    multi-line values in the ``@=end`` form."""
    env, _ = pool
    assert main(["-dump"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# Configuration from machine: ")
    assert "LOG = $(LOCAL_DIR)/log" in lines and "MAX_JOBS_PER_OWNER = 100000" in lines
    assert lines[lines.index("SCRIPT @=end") + 1:][:3] == ["a", "b", "@end"]
    names = [line.split(" ")[0] for line in lines if " = " in line]
    assert names == sorted(names)
    assert main(["-dump", "-expand", "_LOG$"], env) == 0
    assert [line for line in capsys.readouterr().out.splitlines() if " = " in line][-1] == \
        "STARTD_LOG = /srv/pool/log/StartdLog"


def test_config_lists_files_read(pool, capsys, tmp_path):
    """config_val.cpp PrintConfigSources: headings on stderr, tab-indented file names on stdout."""
    env, path = pool
    assert main(["-config"], env) == 0
    captured = capsys.readouterr()
    assert captured.out == f"\t{path}\n\t{tmp_path}/config.d/10-site\n"
    assert captured.err == "Configuration source:\nLocal configuration source:\n"


def test_syntax_error_is_one_line_with_file_and_line(pool, capsys, tmp_path):
    """A broken config file gives one error line naming the file and line, exit 1."""
    env, _ = pool
    (tmp_path / "config.d" / "20-bad").write_text("A = 1\nif\n")
    assert main(["A"], env) == 1
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"roost config: {tmp_path}/config.d/20-bad, line 2: 'if' needs a test: "
                                        "'defined NAME', 'version >= X.Y' or true/false"]


def test_no_arguments_prints_usage(pool, capsys):
    """Without names or -dump the command explains itself and exits 2."""
    env, _ = pool
    assert main([], env) == 2
    assert "roost config UPDATE_INTERVAL" in capsys.readouterr().err


def test_registered_as_roost_subcommand(pool, capsys, monkeypatch):
    """``roost config`` dispatches to this module."""
    env, _ = pool
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run("config", ["UPDATE_INTERVAL"]) == 0
    assert capsys.readouterr().out == "5m\n"


def test_a_closed_output_ends_the_command_quietly():
    """Every command run through run_command ends with status 141 (as a tool killed by
    SIGPIPE) rather than a traceback when its reader has gone."""
    def work(_reading):
        raise BrokenPipeError(32, "Broken pipe")
    assert run_command(CommandLine("roost x", "usage: roost x"), [], work) == CLOSED_OUTPUT_EXIT


@pytest.mark.integration
def test_dump_into_head_has_no_traceback(pool):
    """``condor_config_val -dump | head -1``: the reader goes away after one line and the
    tool ends without a traceback on stderr."""
    env, _ = pool
    code = "import sys; from bindings.cli import main; sys.exit(main(sys.argv[1:]))"
    command = f"{sys.executable} -c '{code}' config -dump -verbose | head -1"
    done = subprocess.run(["bash", "-c", f"{command}; exit ${{PIPESTATUS[0]}}"], capture_output=True, text=True,
                          env={**env, "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.stdout.startswith("# Configuration from machine:")
    assert done.stderr == ""
    assert done.returncode in (0, CLOSED_OUTPUT_EXIT)
