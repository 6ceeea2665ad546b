"""``roost config``: values with their origins, -dump, -v, and errors."""

from __future__ import annotations

import pytest

from bindings.cli import run
from bindings.cli.config import main


@pytest.fixture
def pool(tmp_path):
    """A ROOST_CONFIG file in a temp dir, with a config.d file."""
    path = tmp_path / "roost.conf"
    path.write_text("use ROLE : Personal\nLOCAL_DIR = /srv/pool\nUPDATE_INTERVAL = 5m\n")
    (tmp_path / "config.d").mkdir()
    (tmp_path / "config.d" / "10-site").write_text("SCRIPT @=end\na\nb\n@end\n")
    return {"HOME": str(tmp_path), "ROOST_CONFIG": str(path)}, str(path)


def test_prints_value_and_file_and_line(pool, capsys):
    """Each name prints as ``NAME = value`` and ``# at FILE, line N``."""
    env, path = pool
    assert main(["update_interval", "NETWORK_INTERFACE"], env) == 0
    assert capsys.readouterr().out.splitlines() == [
        "UPDATE_INTERVAL = 5m", f"# at {path}, line 3",
        "NETWORK_INTERFACE = 127.0.0.1", f"# at {path}, line 1 (use ROLE:Personal)",
    ]


def test_default_values_say_default_and_verbose_shows_raw(pool, capsys):
    """A built-in default prints ``# default``; -v adds the unexpanded text."""
    env, _ = pool
    assert main(["-v", "LOG"], env) == 0
    assert capsys.readouterr().out.splitlines() == ["LOG = /srv/pool/log", "# default", "#   raw: $(LOCAL_DIR)/log"]


def test_environment_override_is_shown_as_such(pool, capsys):
    """A ``_ROOST_`` override names its variable."""
    env, _ = pool
    assert main(["UPDATE_INTERVAL"], {**env, "_ROOST_UPDATE_INTERVAL": "7"}) == 0
    assert capsys.readouterr().out.splitlines()[1] == "# from environment variable _ROOST_UPDATE_INTERVAL"


def test_unknown_name_says_not_defined_and_exits_1(pool, capsys):
    """An undefined name is reported on stderr while the others still print."""
    env, _ = pool
    assert main(["NO_SUCH_KNOB", "UPDATE_INTERVAL"], env) == 1
    captured = capsys.readouterr()
    assert "NO_SUCH_KNOB is not defined" in captured.err
    assert captured.out.startswith("UPDATE_INTERVAL = 5m")


def test_dump_prints_every_knob_sorted(pool, capsys):
    """-dump prints all knobs, multi-line values in @= form."""
    env, _ = pool
    assert main(["-dump"], env) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "CLASSAD_LIFETIME = 900" in lines
    assert lines[lines.index("SCRIPT @=end") + 1:][:3] == ["a", "b", "@end"]
    names = [line.split(" ")[0] for line in lines if " = " in line]
    assert names == sorted(names, key=str.upper)


def test_config_lists_files_read(pool, capsys, tmp_path):
    """-config lists the main file and its config.d files."""
    env, path = pool
    assert main(["-config"], env) == 0
    assert capsys.readouterr().out.splitlines() == [
        "# config files read:", f"#   {path}", f"#   {tmp_path}/config.d/10-site"]


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
    assert capsys.readouterr().out.startswith("UPDATE_INTERVAL = 5m")
