"""Roost's ``use CATEGORY : NAME`` templates: small named pieces of config text.

``use ROLE : Personal`` is what a personal pool runs with: every daemon on one
machine, on the loopback interface; its collector is found through the pool's
address file, so it leaves ``COLLECTOR_HOST`` alone. The roles of a pool on several
hosts, as in HTCondor, combine: ``CentralManager`` adds the collector (on port 9618)
and the negotiator, ``Submit`` the schedd, ``Execute`` the startd; each listens on the
host's best address unless ``NETWORK_INTERFACE`` says otherwise. The template text is
read as if it stood at the ``use`` line.
"""

from __future__ import annotations

from daemoncore.config.errors import ConfigError

#: What every role of a pool on several hosts shares: the host's best address unless
#: NETWORK_INTERFACE was set before the ``use`` line.
_ON_THE_NETWORK = """
        NETWORK_INTERFACE = $(NETWORK_INTERFACE:*)
"""

#: (CATEGORY, NAME) in upper case -> config text
TEMPLATES: dict[tuple[str, str], str] = {
    ("ROLE", "PERSONAL"): """
        NETWORK_INTERFACE = 127.0.0.1
        DAEMON_LIST = MASTER, COLLECTOR, SCHEDD, NEGOTIATOR, STARTD, WEB
        START = true
        # One machine, one user: short intervals keep `roost run` snappy.
        NEGOTIATOR_INTERVAL = 5
        NEGOTIATOR_MIN_INTERVAL = 1
        SCHEDD_INTERVAL = 5
        UPDATE_INTERVAL = 5
    """,
    ("ROLE", "CENTRALMANAGER"): _ON_THE_NETWORK + """
        DAEMON_LIST = $(DAEMON_LIST:MASTER), COLLECTOR, NEGOTIATOR
        COLLECTOR_PORT = $(COLLECTOR_PORT:9618)
    """,
    ("ROLE", "SUBMIT"): _ON_THE_NETWORK + """
        DAEMON_LIST = $(DAEMON_LIST:MASTER), SCHEDD
    """,
    ("ROLE", "EXECUTE"): _ON_THE_NETWORK + """
        DAEMON_LIST = $(DAEMON_LIST:MASTER), STARTD
    """,
}


def template_text(category: str, name: str) -> str:
    """The config text of template ``category : name`` (any case).

    Raises:
        ConfigError: no such template; the message lists the known ones.
    """
    key = (category.strip().upper(), name.strip().upper())
    if key in TEMPLATES:
        return TEMPLATES[key]
    known = ", ".join(sorted(f"{c}:{n.title()}" for c, n in TEMPLATES if c == key[0])) or ", ".join(
        sorted({c for c, _ in TEMPLATES}))
    what = "templates" if any(c == key[0] for c, _ in TEMPLATES) else "categories"
    raise ConfigError(f"unknown template 'use {key[0]} : {name.strip()}': known {what} are {known}")
