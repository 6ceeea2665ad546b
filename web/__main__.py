"""``python -m web``: run the web site daemon (``WEB`` in ``DAEMON_LIST``; ``roost web``)."""

import sys

from daemoncore.launcher import run_daemon
from web.service import build_web

if __name__ == "__main__":
    sys.exit(run_daemon("WEB", "Web", build_web))
