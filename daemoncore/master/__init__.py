"""The master: starts the daemons of ``DAEMON_LIST`` as processes, waits until each
answers, restarts one that dies (with backoff, logging why) and stops them all with
SIGTERM. The rules live in :mod:`daemoncore.master.supervisor`; processes in
:mod:`daemoncore.master.processes`; the daemon in :mod:`daemoncore.master.service`."""
