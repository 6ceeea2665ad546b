"""DaemonSettings for a daemon under test, built one way for every test folder."""

from __future__ import annotations

import os

import attrs

from daemoncore.daemon import DaemonSettings


def daemon_settings(directory, daemon_type: str, ad_type: str, **changes) -> DaemonSettings:
    """Settings of ``daemon_type`` (``SCHEDD``) advertising as ``ad_type``: loopback,
    an ephemeral port, its address and log files in ``directory``, no signing key
    file and no collector; ``changes`` replace any of these."""
    name = daemon_type.upper()
    settings = DaemonSettings(
        daemon_type=name, ad_type=ad_type, interface="127.0.0.1", port=0, update_interval=300,
        ad_lifetime=900, max_body=1 << 20, request_timeout=60, signing_key_file="",
        address_file=os.path.join(directory, f".{name.lower()}_address"),
        log_file=os.path.join(directory, f"{name.capitalize()}Log"), collector_host=None, trust_domain="pool")
    return attrs.evolve(settings, **changes)
