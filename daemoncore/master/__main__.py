"""``python -m daemoncore.master``: run a pool's master daemon."""

import sys

from daemoncore.launcher import run_daemon
from daemoncore.master.service import build_master

if __name__ == "__main__":
    sys.exit(run_daemon("MASTER", "DaemonMaster", build_master))
