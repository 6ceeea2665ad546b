"""``python -m collector``: run the collector daemon."""

import sys

from collector.service import build_collector
from daemoncore.launcher import run_daemon

if __name__ == "__main__":
    sys.exit(run_daemon("COLLECTOR", "Collector", build_collector))
