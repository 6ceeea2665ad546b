"""``roost config`` (condor_config_val): print configuration values as
HTCondor's ``condor_config_val`` does (src/condor_tools/config_val.cpp).

``NAME...`` prints each expanded value alone on its line, so ``$(condor_config_val
LOG)`` works in a shell script; an undefined name says ``Not defined: NAME`` on stderr
and makes the status 1. ``-verbose`` adds ``NAME = value`` with where it was set, its
raw text and its default; ``-raw`` prints the unexpanded text; ``-default`` the
built-in value; ``-dump [PATTERN...]`` every knob (raw unless ``-expand``);
``-config`` the files read.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping

from attrs import frozen

from bindings.cli.config_defaults import TOOL_DEFAULTS
from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from daemoncore.config import DEFAULTS, Config, ConfigError, ConfigValue

USAGE = """usage: roost config [options] NAME ...

  NAME                print this knob's value (any case); status 1 if one is not defined
  -verbose, -v        NAME = value, where it was set, its raw text and default
  -raw                the raw, unexpanded text
  -default            the built-in default value
  -dump [PATTERN...]  every knob (or those whose names match a PATTERN), raw
  -expand             with -dump: expanded values
  -config             the config files read
  -file FILE          read FILE instead of $ROOST_CONFIG
"""
COMMAND = CommandLine("roost config", USAGE, [
    Option("-dump"), Option("-verbose", aliases=("-v",)), Option("-raw"), Option("-default"),
    Option("-expand", aliases=("-evaluate",)), Option("-config"), Option("-file", 1)])


@frozen
class Knob:
    """One knob as the tool shows it: its name, expanded and raw values, where it was
    set (``<Default>`` for a built-in) and its built-in default, if any."""

    name: str
    value: str
    raw: str
    location: str
    default: str | None


def knob(config: Config, name: str) -> Knob | None:
    """Knob ``name`` as ``config`` sets it, else HTCondor's tool default, else None.

    Raises:
        ConfigError: its value refers to itself.
    """
    found = config.lookup(name)
    default_raw = DEFAULTS.get(name.upper(), TOOL_DEFAULTS.get(name.upper()))
    default = None if default_raw is None else config.expand(default_raw).strip()
    if found is not None:
        return Knob(found.name.upper(), found.value, found.raw, _location(found), default)
    if name.upper() in TOOL_DEFAULTS:
        return Knob(name.upper(), default or "", default_raw or "", "<Default>", default)
    return None


def _location(value: ConfigValue) -> str:
    """Where ``value`` was set, as config_val's ``# at:`` line says it."""
    origin = value.origin
    if origin.is_default:
        return "<Default>"
    if origin.line is None:
        return origin.describe().removeprefix("at ")
    return f"{origin.source}, line {origin.line}" + (f" ({origin.via})" if origin.via else "")


def assignment(name: str, value: str) -> str:
    """``NAME = value``, or the ``NAME @=end`` form for a value of several lines."""
    if "\n" in value:
        return f"{name} @=end\n{value}\n@end"
    return f"{name} = {value}"


def verbose_lines(item: Knob) -> list[str]:
    """condor_config_val -verbose for one knob: the assignment, ``# at:``, ``# raw:``,
    ``# default:`` and a blank line."""
    lines = [assignment(item.name, item.value), f" # at: {item.location}",
             f" # raw: {assignment(item.name, item.raw)}"]
    if item.default:
        lines.append(f" # default: {item.default}")
    return lines + [""]


def named_lines(item: Knob, reading: Reading) -> list[str]:
    """What condor_config_val prints for a knob named on its command line."""
    if reading.given("-verbose"):
        return verbose_lines(item)
    if reading.given("-default"):
        return [item.default or ""]
    return [item.raw if reading.given("-raw") else item.value]


def dump_lines(config: Config, patterns: tuple[str, ...], reading: Reading) -> list[str]:
    """condor_config_val -dump: a header, then ``NAME = value`` for every knob whose name
    matches one of ``patterns`` (all without one), raw unless ``-expand``.

    Raises:
        UsageError: a pattern is not a regular expression.
    """
    try:
        tests = [re.compile(pattern, re.IGNORECASE) for pattern in patterns]
    except re.error as err:
        raise UsageError(f"-dump: {err.pattern!r} is not a regular expression: {err}") from None
    lines = [f"# Configuration from machine: {socket.gethostname()}", "",
             f"# Parameters with names that match {' '.join(patterns)}:"]
    names = sorted({name.upper() for name in config.names()} | set(TOOL_DEFAULTS))
    for name in names:
        if tests and not any(test.search(name) for test in tests):
            continue
        item = knob(config, name)
        if reading.given("-verbose"):
            lines += verbose_lines(item)[:-1]
        else:
            lines.append(assignment(item.name, item.value if reading.given("-expand") else item.raw))
    return lines


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost config``; 0, 1 when a name is undefined or the config is bad, 2 for a bad command line."""
    return run_command(COMMAND, argv, lambda reading: _run(reading, os.environ if env is None else env))


def _run(reading: Reading, env: Mapping[str, str]) -> int:
    if not (reading.operands or reading.given("-dump") or reading.given("-config")):
        raise UsageError("name a knob (roost config UPDATE_INTERVAL) or use -dump")
    try:
        config = Config.load(reading.last("-file"), env)
        return _print(config, reading)
    except ConfigError as err:
        print(f"roost config: {err}", file=sys.stderr)
        return 1


def _print(config: Config, reading: Reading) -> int:
    if reading.given("-config"):
        _print_sources(config.sources)
    if reading.given("-dump"):
        print("\n".join(dump_lines(config, reading.operands, reading)))
        return 0
    status = 0
    for name in reading.operands:
        item = knob(config, name)
        if item is None:
            print(f"Not defined: {name.upper()}", file=sys.stderr)
            status = 1
        else:
            print("\n".join(named_lines(item, reading)))
    return status


def _print_sources(sources: list[str]) -> None:
    """-config as config_val's PrintConfigSources: the headings on stderr and the file
    names on stdout (tab-indented), so the names pipe cleanly into xargs."""
    if not sources:
        print("Can't find the configuration source.", file=sys.stderr)
        return
    print("Configuration source:", file=sys.stderr, flush=True)
    print(f"\t{sources[0]}", flush=True)
    if len(sources) > 1:
        print("Local configuration source:" if len(sources) == 2 else "Local configuration sources:",
              file=sys.stderr, flush=True)
        print("\n".join(f"\t{source}" for source in sources[1:]), flush=True)


def condor_config_val() -> int:
    """The ``condor_config_val`` console entry point."""
    return main(sys.argv[1:])
