"""``python -m negotiator``: run the negotiator daemon."""

import sys

from daemoncore.launcher import run_daemon
from negotiator.service import build_negotiator

if __name__ == "__main__":
    sys.exit(run_daemon("NEGOTIATOR", "Negotiator", build_negotiator))
