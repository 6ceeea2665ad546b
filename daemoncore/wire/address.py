"""Daemon addresses: ``host:port``, ``http://host:port`` or HTCondor's ``<host:port>``."""

from __future__ import annotations

from attrs import frozen


@frozen
class Address:
    """Where a daemon listens."""

    host: str
    port: int

    def url(self, path: str = "") -> str:
        """The ``http://`` URL of ``path`` at this address."""
        return f"http://{self.host}:{self.port}{path}"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """The address written in ``text``.

    Raises:
        ValueError: ``text`` has no host or no port between 1 and 65535.
    """
    original = text
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1].split("?", 1)[0]
    if text.startswith("http://"):
        text = text[len("http://"):]
    text = text.rstrip("/")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"daemon address {original!r} is not HOST:PORT (e.g. 127.0.0.1:9618)")
    return Address(host.strip("[]"), int(port))
