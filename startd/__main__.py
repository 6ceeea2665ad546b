"""``python -m startd``: run the startd daemon."""

import sys

from daemoncore.launcher import run_daemon
from startd.service import build_startd

if __name__ == "__main__":
    sys.exit(run_daemon("STARTD", "Machine", build_startd))
