"""``daemoncore.security`` loads its names on first use: each is the object of the module
defining it, and a client reading its token (``find_token``, ``SecurityError``) loads
neither ``jwt`` nor ``cryptography``."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import daemoncore.security as security


def test_every_public_name_is_its_modules_object():
    """Each name in ``__all__`` is the object its home module defines, and is listed by dir()."""
    for name in security.__all__:
        assert getattr(security, name) is getattr(importlib.import_module(security._HOMES[name]), name)
    assert set(security.__all__) <= set(dir(security))


def test_unknown_names_raise_attribute_error_and_submodules_import():
    """An unknown name is an AttributeError; ``from daemoncore.security import tokens`` is the submodule."""
    from daemoncore.security import tokens

    assert tokens is importlib.import_module("daemoncore.security.tokens")
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        security.no_such_thing  # noqa: B018


@pytest.mark.integration
def test_reading_a_token_loads_no_jwt_or_cryptography(tmp_path):
    """Finding a token (from ROOST_TOKEN's file) imports neither jwt nor cryptography; verifying one does."""
    token = tmp_path / "token"
    token.write_text("# a comment\nnot.checked.here\n")
    code = ("import sys\n"
            "from daemoncore.security import SecurityError, find_token\n"
            f"assert find_token({{'ROOST_TOKEN': {str(token)!r}}}).text == 'not.checked.here'\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'jwt', 'cryptography'}))\n"
            "from daemoncore.security import read_unverified, TokenError\n"
            "try:\n    read_unverified('not.a.token')\nexcept TokenError:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'jwt', 'cryptography'}))\n")
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert lines.splitlines() == ["[]", "['cryptography', 'jwt']"]
