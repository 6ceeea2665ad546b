"""``roost config``: print configuration values and where they were set (like condor_config_val).

``roost config NAME...`` prints ``NAME = value`` and a ``# at FILE, line N`` (or
``# default``) line for each; ``-dump`` prints every knob; ``-v`` adds the raw,
unexpanded text; ``-config`` lists the files that were read.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from bindings.cli.options import CommandLine, Option, Reading, UsageError, run_command
from daemoncore.config import Config, ConfigError, ConfigValue

USAGE = """usage: roost config [options] NAME ...

  NAME                a knob to print (any case), with where it was set
  -dump               print every knob
  -v, -verbose        also print each value's raw, unexpanded text
  -config             list the config files read
  -file FILE          read FILE instead of $ROOST_CONFIG
"""
COMMAND = CommandLine("roost config", USAGE, [Option("-dump"), Option("-verbose", aliases=("-v",)),
                                              Option("-config"), Option("-file", 1)])


def format_value(value: ConfigValue, verbose: bool, with_origin: bool = True) -> list[str]:
    """The lines ``roost config`` prints for one knob."""
    if "\n" in value.value:
        lines = [f"{value.name} @=end", value.value, "@end"]
    else:
        lines = [f"{value.name} = {value.value}"]
    if with_origin or verbose:
        lines.append(f"# {value.origin.describe()}")
    if verbose and value.raw != value.value:
        lines.append(f"#   raw: {value.raw}")
    return lines


def main(argv: list[str], env: Mapping[str, str] | None = None) -> int:
    """Run ``roost config`` with ``argv``; 0, 1 when a name is undefined or config is bad, 2 for a bad command line."""
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
    verbose = reading.given("-verbose")
    if reading.given("-config"):
        print("\n".join(["# config files read:"] + [f"#   {path}" for path in config.sources]))
    if reading.given("-dump"):
        for value in config.values():
            print("\n".join(format_value(value, verbose, with_origin=verbose)))
    status = 0
    for name in reading.operands:
        value = config.lookup(name)
        if value is None:
            print(f"roost config: {name} is not defined", file=sys.stderr)
            status = 1
        else:
            print("\n".join(format_value(value, verbose)))
    return status


def condor_config_val() -> int:
    """The ``condor_config_val`` console entry point."""
    return main(sys.argv[1:])
