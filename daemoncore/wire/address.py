"""Daemon addresses: ``host:port``, ``http://host:port`` or HTCondor's ``<host:port>``,
and how an address says that its daemon speaks TLS.

A daemon that serves HTTPS adds HTCondor-style sinful-string parameter ``tls=1``:
it advertises ``MyAddress = "<198.18.0.2:9618?tls=1>"`` and writes the same to its
address file, so every ad and file that carries an address also says how to talk to
it, and ``<host:port>`` stays readable (HTCondor's own parameters such as ``alias``
or ``addrs`` are accepted and ignored). A person may also write
``https://host:port`` (in ``COLLECTOR_HOST``, say), which means the same. An address
without either is plain HTTP, as a personal pool on 127.0.0.1 is.
"""

from __future__ import annotations

from attrs import frozen

#: The sinful-string parameter that marks a TLS address, and the values that turn it on.
TLS_PARAMETER = "tls"
_TRUE = ("1", "true", "yes")


@frozen
class Address:
    """Where a daemon listens, and whether it speaks TLS there."""

    host: str
    port: int
    tls: bool = False

    @property
    def scheme(self) -> str:
        """``https`` for a TLS address, else ``http``."""
        return "https" if self.tls else "http"

    def url(self, path: str = "") -> str:
        """The ``http://`` (or ``https://``) URL of ``path`` at this address."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{path}"

    def sinful(self) -> str:
        """HTCondor's form: ``<host:port>``, or ``<host:port?tls=1>`` for TLS."""
        return f"<{self}>"

    def __str__(self) -> str:
        return f"{self.host}:{self.port}" + (f"?{TLS_PARAMETER}=1" if self.tls else "")


def _sinful_parameters(text: str) -> dict[str, str]:
    parameters = {}
    for item in text.split("&"):
        name, _, value = item.partition("=")
        if name:
            parameters[name.strip().lower()] = value.strip()
    return parameters


#: The collector's well-known port: a collector named without a port listens here.
DEFAULT_COLLECTOR_PORT = 9618


def parse_address(text: str, default_port: int | None = None) -> Address:
    """The address written in ``text``; ``default_port`` fills in a port left out.

    Raises:
        ValueError: ``text`` has no host or no port between 1 and 65535.
    """
    original = text
    text = text.strip()
    if text.startswith("<") and text.endswith(">"):
        text = text[1:-1]
    text, _, query = text.partition("?")
    tls = _sinful_parameters(query).get(TLS_PARAMETER, "").lower() in _TRUE
    scheme, sep, rest = text.partition("://")
    if sep:
        if scheme.lower() not in ("http", "https"):
            raise ValueError(f"daemon address {original!r} has scheme {scheme!r}: use http://, https:// or none")
        tls = tls or scheme.lower() == "https"
        text = rest
    text = text.rstrip("/")
    if default_port is not None and ":" not in text.strip("[]"):
        text = f"{text}:{default_port}"
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"daemon address {original!r} is not HOST:PORT (e.g. 127.0.0.1:9618)")
    return Address(host.strip("[]"), int(port), tls)
