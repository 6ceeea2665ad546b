"""HTCondor's built-in values of common knobs that Roost's daemons have no default
for, so ``condor_config_val MAX_JOBS_RUNNING`` answers as it does on an HTCondor
host (HTCondor's param table, src/condor_utils/param_info.in; the manual's
"Configuration Macros"). Log knobs name the files Roost's daemons really write
(``<Daemon>Log`` under ``$(LOG)``; each daemon reads ``<DAEMON>_LOG`` first).

Only the command-line tool consults this table: a value here changes nothing a
daemon does, and a config file or Roost's own default always wins over it.
"""

from __future__ import annotations

TOOL_DEFAULTS: dict[str, str] = {
    # the schedd's limits
    "MAX_JOBS_RUNNING": "10000",
    "MAX_JOBS_SUBMITTED": "2147483647",
    "MAX_JOBS_PER_OWNER": "100000",
    "MAX_JOBS_PER_SUBMISSION": "20000",
    "MAX_HISTORY_LOG": "20971520",
    "MAX_HISTORY_ROTATIONS": "2",
    # names and ports
    "FILESYSTEM_DOMAIN": "$(FULL_HOSTNAME)",
    "COLLECTOR_PORT": "9618",
    "SHARED_PORT_PORT": "9618",
    # each daemon's log, as Roost names it
    "MASTER_LOG": "$(LOG)/MasterLog",
    "COLLECTOR_LOG": "$(LOG)/CollectorLog",
    "NEGOTIATOR_LOG": "$(LOG)/NegotiatorLog",
    "SCHEDD_LOG": "$(LOG)/ScheddLog",
    "STARTD_LOG": "$(LOG)/StartdLog",
}
