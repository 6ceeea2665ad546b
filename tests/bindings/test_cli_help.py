"""Every command answers -help and --help with its usage (status 0), and a bad option
with one line naming it and the usage line on stderr (status 2): each console entry
point of pyproject.toml, each `roost` subcommand and each of their subcommands."""

from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import classad
from bindings.cli import COMMANDS
from bindings.cli import main as roost
from bindings.cli.pool import POOL_COMMANDS

SCRIPTS = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
#: every `roost` command line that names one command, subcommands included
ROOST_COMMANDS = [[name] for name in sorted(COMMANDS)] \
    + [["pool", sub] for sub in sorted(POOL_COMMANDS) if sub != "ca"] \
    + [["pool", "ca", sub] for sub in ("create", "issue", "fingerprint")] \
    + [["token", sub] for sub in ("create", "list", "revoke")]


def _entry_point(spec: str):
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("flag", ["--help", "-help"])
def test_every_console_entry_point_answers_help(script, flag, monkeypatch, capsys):
    """condor_q --help (and every other entry point) prints a usage and exits 0."""
    monkeypatch.setattr(sys, "argv", [script, flag])
    assert _entry_point(SCRIPTS[script])() == 0
    assert capsys.readouterr().out.lower().startswith("usage: ")


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_console_entry_point_refuses_a_bad_option_with_status_2(script, monkeypatch, capsys):
    """condor_q -frobnicate (and every other entry point) names the option and shows the usage."""
    monkeypatch.setattr(sys, "argv", [script, "-frobnicate"])
    assert _entry_point(SCRIPTS[script])() == 2
    err = capsys.readouterr().err.splitlines()
    assert "-frobnicate" in err[0] and err[1].startswith("usage: ")


@pytest.mark.parametrize("command", ROOST_COMMANDS, ids=" ".join)
def test_every_roost_command_answers_help(command, capsys):
    """roost COMMAND --help prints the command's usage and exits 0."""
    assert roost([*command, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: roost {' '.join(command)}")


@pytest.mark.parametrize("command", ROOST_COMMANDS, ids=" ".join)
def test_every_roost_command_refuses_a_bad_option_with_status_2(command, capsys):
    """roost COMMAND -frobnicate exits 2 with `roost COMMAND: unknown option -frobnicate` and the usage line."""
    assert roost([*command, "-frobnicate"]) == 2
    first, usage, *_ = capsys.readouterr().err.splitlines()
    assert first == f"roost {' '.join(command)}: unknown option -frobnicate"
    assert usage.startswith(f"usage: roost {' '.join(command)}")


@pytest.mark.integration
def test_a_real_process_exits_2_on_a_bad_option_and_0_on_help():
    """The status reaches the shell: `roost q -frobnicate` exits 2, `roost q --help` 0."""
    run = [sys.executable, "-c", "import sys; from bindings.cli import main; sys.exit(main())"]
    bad = subprocess.run([*run, "q", "-frobnicate"], capture_output=True, text=True, timeout=60)
    assert (bad.returncode, bad.stdout) == (2, "") and "unknown option -frobnicate" in bad.stderr
    good = subprocess.run([*run, "q", "--help"], capture_output=True, text=True, timeout=60)
    assert good.returncode == 0 and "-constraint EXPR" in good.stdout


def test_the_roost_subcommands_list_their_own_subcommands(capsys):
    """roost pool --help lists up, status and down; a missing subcommand is a usage error."""
    assert roost(["pool", "--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"  {name} " in listed for name in ("up", "status", "down"))
    assert roost(["token"]) == 2
    assert "name one of create | list" in capsys.readouterr().err


def test_history_quotes_an_owner_as_a_classad_string():
    """An owner with a quote in it is compared as a whole; it cannot widen the constraint."""
    from bindings.cli.history import parse_arguments

    sneaky = parse_arguments(['x" || true || "'])["constraints"][0]
    assert classad.ExprTree(sneaky).eval(classad.ClassAd({"Owner": "bob"})) is False
    plain = parse_arguments(["bob"])["constraints"][0]
    assert classad.ExprTree(plain).eval(classad.ClassAd({"Owner": "bob"})) is True
