"""Roost's built-in defaults: the bottom layer of every configuration.

Names and meanings follow HTCondor's where they are the same. Paths hang off
``LOCAL_DIR``, which ``roost pool up --dir`` points at the pool's directory. An
empty ``COLLECTOR_HOST`` means "find the personal pool through its address file"; a
``COLLECTOR_HOST`` without a port means port 9618.
"""

from __future__ import annotations

DEFAULTS: dict[str, str] = {
    # where things live
    "LOCAL_DIR": "$ENV(HOME)/.local/share/roost",
    "LOG": "$(LOCAL_DIR)/log",
    "SPOOL": "$(LOCAL_DIR)/spool",
    "EXECUTE": "$(LOCAL_DIR)/execute",
    "LOCK": "$(LOCAL_DIR)/lock",
    "POOL_ADDRESS_FILE": "$(LOCAL_DIR)/pool.json",
    # the pool
    "CONDOR_HOST": "",
    "COLLECTOR_HOST": "$(CONDOR_HOST)",
    "DAEMON_LIST": "MASTER",
    # NETWORK_INTERFACE: unset means 127.0.0.1; the CentralManager, Submit and Execute
    # roles make it "*" (this host's best address) unless it was set before them
    "BIND_ALL_INTERFACES": "false",
    "UID_DOMAIN": "$(FULL_HOSTNAME)",
    "TRUST_DOMAIN": "$(UID_DOMAIN)",
    # timing (seconds)
    "UPDATE_INTERVAL": "300",
    "CLASSAD_LIFETIME": "900",
    "NEGOTIATOR_INTERVAL": "60",
    "NEGOTIATOR_MIN_INTERVAL": "5",
    "NEGOTIATOR_CYCLE_DELAY": "20",
    "SCHEDD_INTERVAL": "300",
    "PERIODIC_EXPR_INTERVAL": "60",
    "MAX_PERIODIC_EXPR_INTERVAL": "1200",
    "PRIORITY_HALFLIFE": "86400",
    "MATCH_TIMEOUT": "120",
    "CLAIM_WORKLIFE": "1200",
    "MASTER_BACKOFF_CONSTANT": "9",
    "MASTER_BACKOFF_CEILING": "3600",
    # security
    "SEC_PASSWORD_DIRECTORY": "$(LOCAL_DIR)/passwords.d",
    "SEC_TOKEN_POOL_SIGNING_KEY_FILE": "$(SEC_PASSWORD_DIRECTORY)/POOL",
    "SEC_TOKEN_DIRECTORY": "$ENV(HOME)/.config/roost/tokens.d",
    # limits on what the daemons accept
    "MAX_REQUEST_BYTES": "16777216",
    "REQUEST_TIMEOUT": "60",
    # the execute side
    "START": "true",
    # which account runs a job when the startd runs as root (HTCondor's names)
    "STARTER_ALLOW_RUNAS_OWNER": "true",
    "NOBODY_SLOT_USER": "nobody",
    "FLOCK_TO": "",
}
