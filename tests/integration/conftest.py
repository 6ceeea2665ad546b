"""A real personal pool for the integration tests: `roost pool up` in a temporary
directory, with HOME and ROOST_CONFIG pointing into it so the real home is never
touched, and `roost pool down` afterwards whatever happened."""

from __future__ import annotations

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


@pytest.fixture(scope="module")
def pool(tmp_path_factory, request):
    """A running personal pool: its env, directory and address-file facts. A test
    module may set ``POOL_DAEMON_LIST`` to run only some daemons."""
    home = tmp_path_factory.mktemp("home")
    env = isolated_env(home)
    daemons = getattr(request.module, "POOL_DAEMON_LIST", None)
    if daemons:
        env["_ROOST_DAEMON_LIST"] = daemons
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
