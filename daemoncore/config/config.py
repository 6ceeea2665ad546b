"""The configuration of one process: load the layers, then look values up, typed.

Layers, later ones winning: Roost's built-in defaults, the file named by
``ROOST_CONFIG`` (else ``~/.config/roost/config``), every file in that file's
``config.d/`` in name order, then ``_ROOST_<NAME>`` environment variables. Values
are expanded at lookup. Everything is explicit (path, environment, host name), so
a daemon or a test can load a pool's config without touching the user's home.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable, Mapping
from typing import TypeVar

import attrs

from daemoncore.config import conversions
from daemoncore.config.defaults import DEFAULTS
from daemoncore.config.errors import ConfigError
from daemoncore.config.expansion import Expander
from daemoncore.config.origin import DEFAULT_ORIGIN, ENVIRONMENT_SOURCE, Origin
from daemoncore.config.reader import ConfigReader, FileReader, read_text_file
from daemoncore.config.references import parse_value
from daemoncore.config.table import Entry, MacroTable

CONFIG_ENV = "ROOST_CONFIG"
OVERRIDE_PREFIX = "_ROOST_"
_T = TypeVar("_T")


@attrs.frozen
class ConfigValue:
    """A looked-up knob: its name as first spelled, expanded value, raw text and origin."""

    name: str
    value: str
    raw: str
    origin: Origin


def default_config_path(env: Mapping[str, str]) -> str:
    """``~/.config/roost/config`` for the home directory in ``env``."""
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".config", "roost", "config")


@functools.cache
def roost_version() -> str:
    """The installed Roost version, which ``if version >= X.Y`` compares with.

    Looked up only when a config file tests the version (importing ``importlib.metadata``
    and reading the installed distributions costs every command tens of ms otherwise).
    """
    from importlib import metadata

    try:
        return metadata.version("roost")
    except metadata.PackageNotFoundError:
        return "0.0.0"


def config_dir_files(directory: str) -> list[str]:
    """The files of a ``config.d`` directory in name order, skipping hidden and backup files."""
    try:
        names = sorted(os.listdir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return []
    skip = (".", "#")
    return [os.path.join(directory, n) for n in names
            if not n.startswith(skip) and not n.endswith(("~", ".rpmsave", ".rpmnew", ".swp"))
            and os.path.isfile(os.path.join(directory, n))]


class Config:
    """A loaded, read-only configuration. Build it with :meth:`load` or :meth:`from_text`."""

    def __init__(self, table: MacroTable, env: Mapping[str, str], sources: list[str],
                 subsystem: str | None = None) -> None:
        self._table = table
        self._env = dict(env)
        self.sources: tuple[str, ...] = tuple(sources)
        self.subsystem = subsystem.upper() if subsystem else None
        self._expander = Expander(table.segments, self._env)

    @classmethod
    def load(cls, path: str | None = None, env: Mapping[str, str] | None = None, *,
             hostname: str | None = None, read_file: FileReader = read_text_file) -> Config:
        """Load defaults, the config file and its ``config.d/``, then environment overrides.

        Args:
            path: the main config file; default ``$ROOST_CONFIG``, else ``~/.config/roost/config``
                (a missing default file is fine, a named one must exist).
            env: the environment (``os.environ`` if None) for ``ROOST_CONFIG``, ``HOME``,
                ``$ENV(...)`` and ``_ROOST_<NAME>``.
            hostname: the host name behind ``HOSTNAME``/``FULL_HOSTNAME`` (default: this host's).
            read_file: how to read a file's text.

        Raises:
            ConfigError: a file is missing, unreadable or has an error, naming file and line.
        """
        env = os.environ if env is None else env
        main = path or env.get(CONFIG_ENV) or None
        reader = _start_reader(env, hostname, read_file)
        reader.read_path(main or default_config_path(env), if_exists=main is None)
        for extra in config_dir_files(os.path.join(os.path.dirname(main or default_config_path(env)),
                                                    "config.d")):
            reader.read_path(extra)
        _apply_overrides(reader.table, env)
        return cls(reader.table, env, reader.sources)

    @classmethod
    def from_text(cls, text: str, env: Mapping[str, str] | None = None, *, source: str = "<string>",
                  hostname: str | None = None, read_file: FileReader = read_text_file) -> Config:
        """Defaults, then config ``text`` (named ``source`` in messages), then overrides in ``env``.

        Raises:
            ConfigError: the text has an error.
        """
        env = {} if env is None else env
        reader = _start_reader(env, hostname, read_file)
        reader.read_text(text, source)
        _apply_overrides(reader.table, env)
        return cls(reader.table, env, [source])

    def for_subsystem(self, subsystem: str) -> Config:
        """The same values seen by daemon ``subsystem``: ``SCHEDD.NAME`` beats ``NAME``."""
        return Config(self._table, self._env, list(self.sources), subsystem)

    # --- lookup ---

    def lookup(self, name: str) -> ConfigValue | None:
        """The knob ``name`` (any case) with its expanded value and origin, or None.

        Raises:
            ConfigError: its value refers to itself, naming where it was set.
        """
        entry = self._entry(name)
        if entry is None:
            return None
        try:
            if entry.name.upper() == name.upper():
                value = self._expander.expand_name(name)
            else:
                value = self._expander.expand(entry.segments)
        except ConfigError as err:
            raise _located(err.reason, entry.origin) from None
        return ConfigValue(entry.name, value.strip(), entry.raw, entry.origin)

    def __contains__(self, name: str) -> bool:
        return self._entry(name) is not None

    def names(self) -> list[str]:
        """Every defined name, as first spelled, sorted case-insensitively."""
        return sorted((e.name for e in self._table), key=str.upper)

    def values(self) -> list[ConfigValue]:
        """Every defined knob, looked up, sorted by name.

        Raises:
            ConfigError: a value refers to itself.
        """
        return [v for v in (self.lookup(n) for n in self.names()) if v is not None]

    def expand(self, text: str) -> str:
        """Expand ``$(NAME)`` and ``$ENV(NAME)`` in ``text`` against this config.

        Raises:
            ConfigError: ``text`` has a malformed reference or a referenced value loops.
        """
        return self._expander.expand(parse_value(text))

    # --- typed getters; an undefined or empty value gives ``default`` ---

    def param(self, name: str, default: str | None = None) -> str | None:
        """The expanded string value of ``name``, or ``default`` if undefined or empty.

        Raises:
            ConfigError: the value refers to itself.
        """
        found = self.lookup(name)
        return found.value if found is not None and found.value != "" else default

    def param_int(self, name: str, default: int | None = None) -> int | None:
        """``name`` as a whole number.

        Raises:
            ConfigError: the value is not a whole number, naming where it was set.
        """
        return self._typed(name, default, conversions.to_int)

    def param_float(self, name: str, default: float | None = None) -> float | None:
        """``name`` as a number.

        Raises:
            ConfigError: the value is not a number.
        """
        return self._typed(name, default, conversions.to_float)

    def param_bool(self, name: str, default: bool | None = None) -> bool | None:
        """``name`` as true/false, yes/no or 1/0.

        Raises:
            ConfigError: the value is none of those.
        """
        return self._typed(name, default, conversions.to_bool)

    def param_list(self, name: str, default: list[str] | None = None) -> list[str]:
        """``name`` split at commas and whitespace (``[]`` when undefined and no default)."""
        found = self._typed(name, default, conversions.to_list)
        return list(found) if found is not None else []

    def param_duration(self, name: str, default: float | None = None) -> float | None:
        """``name`` in seconds: ``300``, ``5m``, ``1h``, ``1d``, ``1h30m``.

        Raises:
            ConfigError: the value is not a duration.
        """
        return self._typed(name, default, conversions.to_duration)

    def _typed(self, name: str, default: _T | None, convert: Callable[[str], _T]) -> _T | None:
        found = self.lookup(name)
        if found is None or found.value == "":
            return default
        try:
            return convert(found.value)
        except ValueError as err:
            raise _located(f"{found.name} = {_shown(found.value)}: {err}", found.origin) from None

    def _entry(self, name: str) -> Entry | None:
        if self.subsystem and "." not in name:
            entry = self._table.get(f"{self.subsystem}.{name}")
            if entry is not None:
                return entry
        return self._table.get(name)


def _start_reader(env: Mapping[str, str], hostname: str | None, read_file: FileReader) -> ConfigReader:
    table = MacroTable()
    full = hostname if hostname is not None else socket.gethostname()
    for name, raw in {**DEFAULTS, "FULL_HOSTNAME": full, "HOSTNAME": full.split(".")[0]}.items():
        table.set(name, raw, DEFAULT_ORIGIN)
    return ConfigReader(table, env, roost_version, read_file)


def _apply_overrides(table: MacroTable, env: Mapping[str, str]) -> None:
    """Set ``NAME`` from every ``_ROOST_NAME`` variable, in sorted order."""
    for var in sorted(env):
        if var.upper().startswith(OVERRIDE_PREFIX) and len(var) > len(OVERRIDE_PREFIX):
            table.set(var[len(OVERRIDE_PREFIX):], env[var], Origin(ENVIRONMENT_SOURCE, via=var))


def _shown(value: str, limit: int = 60) -> str:
    """A value as quoted in an error message, cut short when it is long."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value)} characters)"


def _located(reason: str, origin: Origin) -> ConfigError:
    """An error about a value, located where the value was set."""
    if origin.is_default:
        return ConfigError(f"{reason} (a built-in default)")
    if origin.via:
        reason = f"{reason} (from {origin.via})"
    return ConfigError(reason, origin.source, origin.line)
