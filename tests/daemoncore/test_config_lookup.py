"""Loading configuration layers from real files, origins, and the typed getters."""

from __future__ import annotations

import os

import pytest

from daemoncore.config import DEFAULTS, Config, ConfigError


@pytest.fixture
def home(tmp_path):
    """A home directory with an empty ~/.config/roost."""
    (tmp_path / ".config" / "roost").mkdir(parents=True)
    return tmp_path


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_defaults_alone_when_there_is_no_config_file(tmp_path):
    """With no user config file, every knob comes from Roost's defaults."""
    config = Config.load(env={"HOME": str(tmp_path)}, hostname="h")
    assert config.param_int("UPDATE_INTERVAL") == 300
    assert config.param_int("CLASSAD_LIFETIME") == 900
    assert config.param_int("NEGOTIATOR_INTERVAL") == 60
    assert config.param("LOG") == f"{tmp_path}/.local/share/roost/log"
    assert config.lookup("UPDATE_INTERVAL").origin.describe() == "default"
    assert config.sources == ()
    assert set(DEFAULTS) <= {name.upper() for name in config.names()}


def test_user_config_then_config_d_in_name_order(home):
    """~/.config/roost/config is read first, then its config.d files sorted by name."""
    main = write(home / ".config/roost/config", "A = main\nB = main\nC = main\n")
    write(home / ".config/roost/config.d/20-later", "B = twenty\nC = twenty\n")
    write(home / ".config/roost/config.d/10-first", "B = ten\n")
    write(home / ".config/roost/config.d/.hidden", "C = hidden\n")
    write(home / ".config/roost/config.d/30-backup~", "C = backup\n")
    config = Config.load(env={"HOME": str(home)})
    assert [config.param(n) for n in "ABC"] == ["main", "twenty", "twenty"]
    assert config.sources == (main, f"{home}/.config/roost/config.d/10-first",
                              f"{home}/.config/roost/config.d/20-later")
    assert config.lookup("c").origin.describe() == f"at {home}/.config/roost/config.d/20-later, line 2"


def test_roost_config_names_the_main_file_and_its_config_d(home, tmp_path_factory):
    """``ROOST_CONFIG`` replaces the user config; the config.d beside it is read."""
    pool = tmp_path_factory.mktemp("pool")
    write(home / ".config/roost/config", "A = user\n")
    path = write(pool / "roost.conf", "A = pool\n")
    write(pool / "config.d/x", "B = pool.d\n")
    config = Config.load(env={"HOME": str(home), "ROOST_CONFIG": path})
    assert config.param("A") == "pool" and config.param("B") == "pool.d"


def test_explicit_path_beats_roost_config(home, tmp_path_factory):
    """``Config.load(path)`` reads that file even when ROOST_CONFIG is set."""
    pool = tmp_path_factory.mktemp("pool")
    path = write(pool / "mine", "A = explicit\n")
    other = write(pool / "other", "A = env\n")
    assert Config.load(path, env={"HOME": str(home), "ROOST_CONFIG": other}).param("A") == "explicit"


def test_missing_named_config_file_is_an_error(home):
    """A ROOST_CONFIG that names a missing file is reported, not ignored."""
    with pytest.raises(ConfigError, match="does not exist"):
        Config.load(env={"HOME": str(home), "ROOST_CONFIG": str(home / "nope")})


def test_environment_overrides_win_and_remember_the_variable(home):
    """``_ROOST_<NAME>`` beats every file, in any case, and says which variable set it."""
    write(home / ".config/roost/config", "UPDATE_INTERVAL = 10\n")
    config = Config.load(env={"HOME": str(home), "_ROOST_update_interval": "42"})
    assert config.param_int("UPDATE_INTERVAL") == 42
    assert config.lookup("UPDATE_INTERVAL").origin.describe() == \
        "from environment variable _ROOST_update_interval"


def test_environment_override_may_extend_the_file_value(home):
    """An override that refers to its own name appends to what the files set."""
    write(home / ".config/roost/config", "DAEMON_LIST = MASTER\n")
    config = Config.load(env={"HOME": str(home), "_ROOST_DAEMON_LIST": "$(DAEMON_LIST), STARTD"})
    assert config.param_list("DAEMON_LIST") == ["MASTER", "STARTD"]


def test_syntax_error_in_config_d_names_that_file(home):
    """An error in a config.d file carries that file's path and line."""
    write(home / ".config/roost/config", "A = 1\n")
    bad = write(home / ".config/roost/config.d/50-bad", "\n\nwhat\n")
    with pytest.raises(ConfigError) as err:
        Config.load(env={"HOME": str(home)})
    assert (err.value.source, err.value.line) == (bad, 3)


def test_include_is_relative_to_the_including_file(tmp_path):
    """``include : FILE`` reads FILE beside the including file, in place."""
    main = write(tmp_path / "main.conf", "A = before\ninclude : parts/extra.conf\nB = after\n")
    write(tmp_path / "parts/extra.conf", "A = included\nB = included\nC = included\n")
    config = Config.load(main, env={"HOME": str(tmp_path)})
    assert [config.param(n) for n in "ABC"] == ["included", "after", "included"]
    assert config.lookup("C").origin.source == f"{tmp_path}/parts/extra.conf"


def test_include_path_expands_references_set_so_far(tmp_path):
    """The include path may use ``$(NAME)`` of values set earlier."""
    write(tmp_path / "site/knobs", "FROM_SITE = yes\n")
    main = write(tmp_path / "main.conf", f"SITE = {tmp_path}/site\ninclude : $(SITE)/knobs\n")
    assert Config.load(main, env={}).param_bool("FROM_SITE") is True


def test_include_missing_file_is_an_error_but_ifexist_is_quiet(tmp_path):
    """``include`` of a missing file fails at its line; ``include ifexist`` skips it."""
    quiet = write(tmp_path / "quiet.conf", "include ifexist : nothing.conf\nA = 1\n")
    assert Config.load(quiet, env={}).param("A") == "1"
    loud = write(tmp_path / "loud.conf", "A = 1\ninclude : nothing.conf\n")
    with pytest.raises(ConfigError) as err:
        Config.load(loud, env={})
    assert (err.value.source, err.value.line) == (loud, 2)
    assert "nothing.conf does not exist" in str(err.value)


def test_include_loop_is_an_error(tmp_path):
    """A file that includes itself, even through another, is reported."""
    write(tmp_path / "b.conf", "include : a.conf\n")
    main = write(tmp_path / "a.conf", "include : b.conf\n")
    with pytest.raises(ConfigError, match="includes itself"):
        Config.load(main, env={})


def test_include_command_is_refused(tmp_path):
    """Roost never runs a program named in config."""
    main = write(tmp_path / "a.conf", "include command : /bin/echo A = 1\n")
    with pytest.raises(ConfigError, match="not supported"):
        Config.load(main, env={})


def test_unclosed_if_in_an_included_file_is_reported_there(tmp_path):
    """Each file must close its own conditionals."""
    write(tmp_path / "inner.conf", "if true\nA = 1\n")
    main = write(tmp_path / "main.conf", "include : inner.conf\nendif\n")
    with pytest.raises(ConfigError) as err:
        Config.load(main, env={})
    assert err.value.source == f"{tmp_path}/inner.conf" and err.value.line == 1


def test_unreadable_file_is_an_error(tmp_path):
    """A config path that is a directory gets a clear error instead of a traceback."""
    (tmp_path / "dir.conf").mkdir()
    with pytest.raises(ConfigError, match="cannot read config file"):
        Config.load(str(tmp_path / "dir.conf"), env={})


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("YES", True), ("1", True), ("False", False), ("no", False), ("0", False)])
def test_param_bool_accepts_htcondor_words(text, value):
    """param_bool reads HTCondor's true/false words in any case."""
    assert Config.from_text(f"X = {text}").param_bool("X") is value


@pytest.mark.parametrize(("text", "seconds"), [
    ("300", 300), ("2.5", 2.5), ("30s", 30), ("5m", 300), ("1h", 3600), ("1d", 86400),
    ("1h30m", 5400), ("1w", 604800), ("2 m", 120)])
def test_param_duration_reads_numbers_and_suffixes(text, seconds):
    """Durations are seconds, plain or with s/m/h/d/w suffixes."""
    assert Config.from_text(f"X = {text}").param_duration("X") == seconds


def test_typed_getters_read_numbers_and_lists():
    """param_int, param_float and param_list convert the expanded value."""
    config = Config.from_text("N = $(M)0\nM = 3\nF = 1e7\nL = a, b  c,,d\n")
    assert config.param_int("N") == 30
    assert config.param_float("F") == 1e7
    assert config.param_list("L") == ["a", "b", "c", "d"]


def test_typed_getters_return_the_default_when_undefined_or_empty():
    """An unset or empty knob yields the caller's default."""
    config = Config.from_text("EMPTY =\n")
    assert config.param_int("NOPE", 7) == 7
    assert config.param_bool("EMPTY", True) is True
    assert config.param_list("NOPE") == []
    assert config.param_duration("EMPTY", 1.5) == 1.5
    assert config.param("NOPE") is None


@pytest.mark.parametrize(("getter", "expected"), [
    ("param_int", "expected a whole number"), ("param_float", "expected a number"),
    ("param_bool", "expected true/false"), ("param_duration", "expected seconds or a duration")])
def test_bad_typed_value_names_knob_value_and_line(getter, expected):
    """A value of the wrong type is an error naming the knob, its value, where it was set and the type."""
    config = Config.from_text("\nUPDATE_INTERVAL = soon\n", source="pool.conf")
    with pytest.raises(ConfigError) as err:
        getattr(config, getter)("update_interval")
    assert str(err.value).startswith(f"pool.conf, line 2: UPDATE_INTERVAL = 'soon': {expected}")


def test_bad_environment_override_says_which_variable():
    """A bad ``_ROOST_`` value is traced back to its environment variable."""
    config = Config.from_text("", env={"_ROOST_UPDATE_INTERVAL": "x"})
    with pytest.raises(ConfigError, match="from _ROOST_UPDATE_INTERVAL"):
        config.param_int("UPDATE_INTERVAL")


def test_subsystem_prefixed_knob_wins_for_that_daemon():
    """``COLLECTOR.UPDATE_INTERVAL`` applies to the collector only."""
    config = Config.from_text("COLLECTOR.UPDATE_INTERVAL = 5\n")
    assert config.param_int("UPDATE_INTERVAL") == 300
    collector = config.for_subsystem("collector")
    assert collector.param_int("UPDATE_INTERVAL") == 5
    assert collector.lookup("UPDATE_INTERVAL").origin.line == 1


def test_expand_uses_the_loaded_values():
    """Config.expand fills references in arbitrary text."""
    config = Config.from_text("LOCAL_DIR = /p\n")
    assert config.expand("$(LOG)/CollectorLog") == "/p/log/CollectorLog"


def test_load_does_not_read_the_real_home(tmp_path, monkeypatch):
    """Everything comes from the given environment, never from os.environ."""
    monkeypatch.setenv("_ROOST_LEAK", "1")
    config = Config.load(env={"HOME": str(tmp_path)})
    assert "LEAK" not in config
    assert os.environ["_ROOST_LEAK"] == "1"
