"""``roost submit FILE --dry-run``: print the job ads a submit description makes,
without a pool. Old ClassAd syntax by default, JSON with ``-json``."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

from bindings.submit import Submit
from schedd.submit import SubmitError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="roost submit", description=__doc__.splitlines()[0])
    parser.add_argument("file", metavar="FILE", help="the submit description file")
    parser.add_argument("-dry-run", "--dry-run", dest="dry_run", action="store_true",
                        help="print the job ads instead of submitting them")
    parser.add_argument("-json", "--json", dest="json", action="store_true",
                        help="print the ads as a JSON list")
    parser.add_argument("-cluster", "--cluster", type=int, default=1,
                        help="cluster id to number the dry-run ads with (default 1)")
    return parser


def _warning_printer(path: str):
    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).replace("<submit description>", path, 1)
        print(f"roost submit: warning: {text}", file=sys.stderr)
    return show


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if not args.dry_run:
        print("roost submit: only --dry-run works until the schedd arrives", file=sys.stderr)
        return 2
    try:
        with open(args.file, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as exc:
        print(f"roost submit: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    directory = os.path.dirname(os.path.abspath(args.file))
    old_cwd = os.getcwd()
    try:
        os.chdir(directory)
        with warnings.catch_warnings():
            warnings.showwarning = _warning_printer(args.file)
            warnings.simplefilter("always")
            ads = Submit(text).jobs(clusterid=args.cluster, owner=_owner())
    except SubmitError as exc:
        message = str(exc).replace("<submit description>", args.file, 1)
        print(f"roost submit: {message}", file=sys.stderr)
        return 1
    finally:
        os.chdir(old_cwd)
    if args.json:
        print("[\n" + ",\n".join(ad.printJson().rstrip() for ad in ads) + "\n]")
    else:
        print("\n".join(ad.printOld() for ad in ads), end="")
    return 0


def _owner() -> str | None:
    try:
        import getpass

        return getpass.getuser()
    except (KeyError, OSError):
        return None
