"""``import bindings`` loads its public names on first use: each name is the class its
module defines, submodules are reachable as attributes, and a bare import or
``roost --help`` loads neither the ClassAd grammar nor Twisted."""

from __future__ import annotations

import subprocess
import sys

import pytest

import bindings


def test_every_public_name_is_its_modules_object():
    """Each name in ``bindings.__all__`` is the object of the module that defines it."""
    import importlib

    for name in bindings.__all__:
        home = importlib.import_module(bindings._HOMES[name])
        assert getattr(bindings, name) is getattr(home, name)
    assert set(bindings.__all__) <= set(dir(bindings))


def test_submodules_are_attributes_and_unknown_names_raise_attribute_error():
    """``bindings.schedd`` is the submodule; an unknown name is an AttributeError."""
    import bindings.schedd as schedd_module

    assert bindings.schedd is schedd_module
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        bindings.no_such_thing  # noqa: B018
    assert not hasattr(bindings, "_private")


@pytest.mark.integration
def test_a_bare_import_and_the_usage_load_no_grammar_or_twisted():
    """``import bindings`` and ``roost --help`` import neither lark, twisted nor the bindings' modules."""
    code = ("import sys, bindings, bindings.cli, contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()): bindings.cli.main(['--help'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lark', 'twisted', 'boto3', 'classad')"
            " or m in ('bindings.schedd', 'bindings.submit', 'bindings.collector')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
