"""``roost config``: print configuration values and where they were set (like condor_config_val).

``roost config NAME...`` prints ``NAME = value`` and a ``# at FILE, line N`` (or
``# default``) line for each; ``-dump`` prints every knob; ``-v`` adds the raw,
unexpanded text; ``-config`` lists the files that were read.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping

from daemoncore.config import Config, ConfigError, ConfigValue


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="roost config", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="knobs to print (any case)")
    parser.add_argument("-dump", "--dump", action="store_true", help="print every knob")
    parser.add_argument("-v", "-verbose", "--verbose", action="store_true",
                        help="also print each value's raw text")
    parser.add_argument("-config", "--config", action="store_true", help="list the config files read")
    parser.add_argument("-file", "--file", metavar="FILE", help="read FILE instead of $ROOST_CONFIG")
    return parser


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
    """Run ``roost config`` with ``argv``; return 0, or 1 when a name is undefined or config is bad."""
    args = _parser().parse_args(argv)
    if not (args.names or args.dump or args.config):
        _parser().print_usage(sys.stderr)
        print("roost config: name a knob (roost config UPDATE_INTERVAL) or use -dump", file=sys.stderr)
        return 2
    try:
        config = Config.load(args.file, os.environ if env is None else env)
        return _print(config, args)
    except ConfigError as err:
        print(f"roost config: {err}", file=sys.stderr)
        return 1


def _print(config: Config, args: argparse.Namespace) -> int:
    if args.config:
        print("\n".join(["# config files read:"] + [f"#   {path}" for path in config.sources]))
    if args.dump:
        for value in config.values():
            print("\n".join(format_value(value, args.verbose, with_origin=args.verbose)))
    status = 0
    for name in args.names:
        value = config.lookup(name)
        if value is None:
            print(f"roost config: {name} is not defined", file=sys.stderr)
            status = 1
        else:
            print("\n".join(format_value(value, args.verbose)))
    return status


def condor_config_val() -> int:
    """The ``condor_config_val`` console entry point."""
    import sys

    return main(sys.argv[1:])
