"""``python -m schedd``: run the schedd daemon."""

import sys

from daemoncore.launcher import run_daemon
from schedd.service import build_schedd

if __name__ == "__main__":
    sys.exit(run_daemon("SCHEDD", "Scheduler", build_schedd))
