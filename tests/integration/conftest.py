"""A real personal pool for the integration tests: `roost pool up` in a temporary
directory, with HOME and ROOST_CONFIG pointing into it so the real home is never
touched, and `roost pool down` afterwards whatever happened."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys

import pytest

ROOST = [sys.executable, "-c", "import sys; from bindings.cli import main; sys.exit(main())"]


def isolated_env(home) -> dict:
    """An environment whose home, config and data directories are all under ``home``."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("ROOST_TOKEN", "XDG_DATA_HOME", "COLLECTOR_HOST") and not key.startswith("_ROOST_")}
    config = home / "user-config"
    config.touch()
    env.update({"HOME": str(home), "ROOST_CONFIG": str(config),
                # a restart wait of 1 s, and expiry swept every second, keep the suite short
                "_ROOST_MASTER_BACKOFF_CONSTANT": "0", "_ROOST_COLLECTOR_SWEEP_INTERVAL": "1"})
    return env


def roost(env, *args, check=True, timeout=60):
    """Run the `roost` command line; its completed process."""
    done = subprocess.run([*ROOST, *args], env=env, capture_output=True, text=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"roost {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


@contextlib.contextmanager
def personal_pool(home, overrides: dict | None = None):
    """A pool started by `roost pool up` in ``home`` with ``overrides`` added to its
    environment; while it runs, this process's HOME and ROOST_CONFIG point at it, so
    the bindings find it. Stopped with `roost pool down` whatever happens."""
    env = {**isolated_env(home), **(overrides or {})}
    directory = home / "pool"
    try:
        roost(env, "pool", "up", "--dir", str(directory))
        facts = json.loads((home / ".local" / "share" / "roost" / "pool.json").read_text())
        with pytest.MonkeyPatch.context() as patch:
            for key in ("ROOST_TOKEN", "XDG_DATA_HOME", "COLLECTOR_HOST"):
                patch.delenv(key, raising=False)
            patch.setenv("HOME", env["HOME"])
            patch.setenv("ROOST_CONFIG", env["ROOST_CONFIG"])
            yield {"env": env, "dir": directory, "facts": facts, "home": home, "patch": patch}
    finally:
        roost(env, "pool", "down", "--dir", str(directory), check=False)


@pytest.fixture(scope="module")
def pool(tmp_path_factory, request):
    """A running personal pool for the test module. A module may set ``POOL_ENV`` (extra
    environment, e.g. ``{"_ROOST_NUM_CPUS": "2"}``) and ``POOL_DAEMON_LIST``."""
    overrides = dict(getattr(request.module, "POOL_ENV", {}))
    daemons = getattr(request.module, "POOL_DAEMON_LIST", None)
    if daemons:
        overrides["_ROOST_DAEMON_LIST"] = daemons
    with personal_pool(tmp_path_factory.mktemp("home"), overrides) as running:
        yield running


@pytest.fixture
def shared_dir():
    """A directory every account may write (mode 1777, like /tmp), outside pytest's
    root-only temporary tree: where a job that runs as another account (as jobs of
    a root pool do) leaves files for the test to read while it runs."""
    import shutil
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp(prefix="roost-shared-"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
