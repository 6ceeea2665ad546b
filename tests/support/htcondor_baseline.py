"""HTCondor's own ClassAd library as a referee. Its wheel installs a top-level
``classad`` module that would shadow Roost's, so it lives in a Python of its own,
named by ``ROOST_HTCONDOR_PYTHON`` (``.ci/run`` makes one), and is run as a child
process; tests that need it skip, saying so, where there is none."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

_READ_OLD = """
import json, sys
import classad2
ads = classad2.parseAds(sys.stdin.read(), classad2.ParserType.Old)
print(json.dumps([{k.lower(): repr(ad.lookup(k)) for k in ad.keys()} for ad in ads]))
"""


def htcondor_python() -> str:
    """The Python that has HTCondor's bindings, or skip the calling test."""
    python = os.environ.get("ROOST_HTCONDOR_PYTHON")
    if not python or not os.access(python, os.X_OK):
        pytest.skip("HTCondor's bindings are not available: set ROOST_HTCONDOR_PYTHON to a Python "
                    "with `pip install htcondor` (.ci/run does)")
    return python


def read_old_with_classad2(text: str) -> list[dict[str, str]]:
    """Each ad of the old-syntax ``text`` as classad2.parseAds reads it: lower-cased
    attribute name to HTCondor's canonical expression text."""
    done = subprocess.run([htcondor_python(), "-c", _READ_OLD], input=text, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"classad2 could not read the text: {done.stderr}"
    return json.loads(done.stdout)
