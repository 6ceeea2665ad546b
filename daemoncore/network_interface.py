"""Which address a daemon binds and advertises, chosen from ``NETWORK_INTERFACE`` as
HTCondor chooses it.

``NETWORK_INTERFACE`` holds an IP address, a pattern with ``*`` (``198.18.*``), an
interface name (``eth0``) or ``*`` for "this host's best address"; a comma list is
read in order of preference. Among the addresses a setting matches, the best is a
public one, then a private one, then loopback, as HTCondor ranks them. An explicit
IP address is taken as written, without looking at the host's interfaces (so the
personal pool's ``127.0.0.1`` needs no lookup).

:func:`choose_address` is pure; :func:`host_addresses` reads the host's interfaces.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket

from attrs import frozen

#: The address a daemon uses when nothing is configured: the personal pool's.
LOOPBACK = "127.0.0.1"
#: What ``BIND_ALL_INTERFACES`` binds: every IPv4 interface.
ALL_INTERFACES = "0.0.0.0"


class NoInterfaceAddress(ValueError):
    """``NETWORK_INTERFACE`` matches none of this host's addresses."""


@frozen
class InterfaceAddress:
    """One IPv4 address of one network interface of this host."""

    interface: str
    ip: str

    def rank(self) -> int:
        """HTCondor's order of preference: public (2) before private (1) before loopback (0)."""
        parsed = ipaddress.IPv4Address(self.ip)
        if parsed.is_loopback:
            return 0
        if parsed.is_private or parsed.is_link_local or parsed.is_reserved:
            return 1
        return 2


def host_addresses() -> list[InterfaceAddress]:
    """Every IPv4 address of this host's interfaces that are up, in the kernel's order."""
    import psutil

    stats = psutil.net_if_stats()
    found = []
    for name, addresses in psutil.net_if_addrs().items():
        if name in stats and not stats[name].isup:
            continue
        found.extend(InterfaceAddress(name, entry.address) for entry in addresses if entry.family == socket.AF_INET)
    return found


def is_ip_address(text: str) -> bool:
    """True when ``text`` is an IPv4 address written out (no pattern, no name)."""
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def choose_address(setting: str, candidates: list[InterfaceAddress]) -> str:
    """The address ``NETWORK_INTERFACE = setting`` picks among ``candidates``.

    Raises:
        NoInterfaceAddress: no candidate matches; the message lists the candidates.
    """
    wanted = [part.strip() for part in setting.split(",") if part.strip()] or ["*"]
    for pattern in wanted:
        if is_ip_address(pattern):
            return pattern
        matching = [c for c in candidates if c.interface == pattern or fnmatch.fnmatchcase(c.ip, pattern)]
        if pattern == "*":
            matching = list(candidates)
        if matching:
            return max(matching, key=InterfaceAddress.rank).ip
    known = ", ".join(f"{c.interface} {c.ip}" for c in candidates) or "none"
    raise NoInterfaceAddress(f"NETWORK_INTERFACE = {setting} matches none of this host's IPv4 addresses "
                             f"({known}): name one of them, an interface, or *")


def resolve_network_interface(setting: str | None) -> str:
    """The address a daemon advertises for ``NETWORK_INTERFACE = setting`` on this host;
    ``127.0.0.1`` when it is not set.

    Raises:
        NoInterfaceAddress: the setting matches none of this host's addresses.
    """
    setting = (setting or "").strip()
    if not setting:
        return LOOPBACK
    if is_ip_address(setting):
        return setting
    return choose_address(setting, host_addresses())
