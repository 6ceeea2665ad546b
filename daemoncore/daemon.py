"""The base every Roost daemon runs on: a ``twisted.application`` service that listens
on one port for its routes and ``/metrics``, publishes its address, and advertises its
own ad to the collector every ``UPDATE_INTERVAL`` with a lifetime.

Everything comes in through the constructor (config values, the reactor, the
handlers), so a test drives a daemon with ``MemoryReactorClock``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from attrs import frozen
from prometheus_client import CollectorRegistry
from twisted.application import service
from twisted.internet import task
from twisted.internet.defer import Deferred, maybeDeferred, succeed
from twisted.logger import Logger

from daemoncore.config import Config, ConfigError
from daemoncore.network_interface import ALL_INTERFACES, NoInterfaceAddress, resolve_network_interface
from daemoncore.security.daemon_credentials import (
    DAEMON_TOKEN_KNOB,
    PUBLIC_KEY_KNOB,
    DaemonCredentials,
    load_daemon_credentials,
)
from daemoncore.security.pool_trust import pools_from_wire
from daemoncore.security.tls_server import daemon_tls
from daemoncore.security.tls_settings import TlsSettings
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, Address, parse_address
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.collector_routes import ADVERTISE, REVOCATIONS, TRUST
from daemoncore.wire.daemon_routes import PING
from daemoncore.wire.metrics import REQUIRE_AUTHENTICATION_KNOB, metrics_routes
from daemoncore.wire.server import ApiResource, JsonReply, make_site
from daemoncore.wire.sharing import sharing_cooperator
from daemoncore.wire.tls_port import listen

_log = Logger()


@frozen
class DaemonSettings:
    """What a daemon reads from config, checked once before it starts."""

    daemon_type: str
    ad_type: str
    interface: str
    port: int
    update_interval: float
    ad_lifetime: float
    max_body: int
    request_timeout: float
    signing_key_file: str
    address_file: str
    log_file: str
    collector_host: str | None
    trust_domain: str
    #: BIND_ALL_INTERFACES: listen on every interface, still advertising ``interface``.
    bind_all: bool = False
    #: AUTH_SSL_SERVER_CERTFILE/KEYFILE/CAFILE, AUTH_SSL_CLIENT_CAFILE: HTTPS when a certificate is named.
    tls: TlsSettings = TlsSettings()
    #: SEC_TOKEN_POOL_PUBLIC_KEY_FILE and SEC_DAEMON_TOKEN_FILE: a joined host's credentials.
    public_key_file: str = ""
    daemon_token_file: str = ""
    #: METRICS_REQUIRE_AUTHENTICATION: false lets a scraper read ``/metrics`` without a token.
    metrics_require_authentication: bool = True
    #: <SUBSYS>_DEBUG naming D_COMMAND (or D_FULLDEBUG, D_ALL): log every request's access line.
    log_requests: bool = False

    @classmethod
    def from_config(cls, config: Config, daemon_type: str, ad_type: str) -> DaemonSettings:
        """The settings of daemon ``daemon_type`` (``COLLECTOR``) advertising as ``ad_type``.

        Raises:
            ConfigError: a value has the wrong type, naming the file and line that set it.
        """
        upper = daemon_type.upper()
        log_dir = config.param("LOG", ".")
        return cls(
            daemon_type=upper,
            ad_type=ad_type,
            interface=advertised_interface(config),
            port=config.param_int(f"{upper}_PORT", 0),
            update_interval=config.param_duration(f"{upper}_UPDATE_INTERVAL")
            or config.param_duration("UPDATE_INTERVAL", 300),
            ad_lifetime=config.param_duration("CLASSAD_LIFETIME", 900),
            max_body=config.param_int("MAX_REQUEST_BYTES", 16 * 1024 * 1024),
            request_timeout=config.param_duration("REQUEST_TIMEOUT", 60),
            signing_key_file=config.param("SEC_TOKEN_POOL_SIGNING_KEY_FILE", ""),
            address_file=config.param(f"{upper}_ADDRESS_FILE")
            or os.path.join(log_dir, f".{daemon_type.lower()}_address"),
            log_file=config.param(f"{upper}_LOG") or os.path.join(log_dir, f"{daemon_type.capitalize()}Log"),
            collector_host=configured_collector(config),
            trust_domain=config.param("TRUST_DOMAIN") or "pool",
            bind_all=bool(config.param_bool("BIND_ALL_INTERFACES", False)),
            tls=TlsSettings.from_config(config),
            public_key_file=config.param(PUBLIC_KEY_KNOB, ""),
            daemon_token_file=config.param(DAEMON_TOKEN_KNOB, ""),
            metrics_require_authentication=bool(config.param_bool(REQUIRE_AUTHENTICATION_KNOB, True)),
            log_requests=logs_commands(config.param(f"{upper}_DEBUG", "")),
        )


#: The ``<SUBSYS>_DEBUG`` categories under which a daemon logs every request it answers.
_REQUEST_CATEGORIES = frozenset({"D_COMMAND", "D_FULLDEBUG", "D_ALL"})


def logs_commands(debug: str) -> bool:
    """Whether a ``<SUBSYS>_DEBUG`` value (``D_COMMAND D_SECURITY:2``, commas or spaces
    between categories, each with an optional ``:level``) names a category that logs
    every request."""
    return any(word.split(":", 1)[0].upper() in _REQUEST_CATEGORIES for word in debug.replace(",", " ").split())


def advertised_interface(config: Config) -> str:
    """The address chosen by ``NETWORK_INTERFACE`` (127.0.0.1 when unset).

    Raises:
        ConfigError: it matches none of this host's addresses, naming where it was set.
    """
    try:
        return resolve_network_interface(config.param("NETWORK_INTERFACE"))
    except NoInterfaceAddress as exc:
        raise ConfigError(f"{exc} (set {config.lookup('NETWORK_INTERFACE').origin.describe()})") from None


def configured_collector(config: Config) -> str | None:
    """``COLLECTOR_HOST`` as ``host:port`` (a host alone means port 9618), or None when empty.

    Raises:
        ConfigError: it is not an address, naming where it was set.
    """
    found = config.lookup("COLLECTOR_HOST")
    if found is None or not found.value.strip():
        return None
    try:
        return str(parse_address(found.value, default_port=DEFAULT_COLLECTOR_PORT))
    except ValueError as exc:
        raise ConfigError(f"COLLECTOR_HOST ({found.origin.describe()}): {exc}") from None


class DaemonService(service.MultiService):
    """One daemon: its listener, its address file and its self-advertising loop.

    Subclasses give ``handlers()``, may extend ``own_ad()`` and ``advertise_self()``,
    and register what they measure in ``metrics_registry``, served on ``/metrics``.
    """

    def __init__(self, settings: DaemonSettings, reactor, key: bytes | None = None, http=None) -> None:
        super().__init__()
        self.settings = settings
        self.reactor = reactor
        self._http = http  # treq, or a stand-in such as StubTreq in tests
        self.credentials = (DaemonCredentials.signing(key) if key is not None else load_daemon_credentials(
            settings.signing_key_file, settings.public_key_file, settings.daemon_token_file))
        self.key = self.credentials.signing_key  # None on a host that joined the pool
        self.start_time: float | None = None
        self.port = None
        self.metrics_registry = CollectorRegistry()
        self._sequence = 0
        self._advertiser = task.LoopingCall(self._advertise_quietly)
        self._advertiser.clock = reactor

    # --- what subclasses provide ---

    def handlers(self) -> dict:
        """The daemon's routes (``/v1/ping`` and ``/metrics`` are added to every daemon)."""
        return {}

    def route_table(self) -> dict:
        """Every route the daemon serves: ``handlers()`` with ``/v1/ping`` and ``/metrics``."""
        return {PING: self._ping, **self.handlers(),
                **metrics_routes(self.metrics_registry, self.settings.metrics_require_authentication)}

    def own_ad(self) -> dict:
        """The daemon's ad in JSON form, as it advertises it."""
        host = socket.gethostname()
        self._sequence += 1
        return {
            "MyType": self.settings.ad_type,
            "Name": f"{self.settings.daemon_type.lower()}@{host}",
            "Machine": host,
            "MyAddress": f"<{self.address}>",
            "DaemonStartTime": int(self.start_time or 0),
            "UpdateSequenceNumber": self._sequence,
            "UpdateInterval": int(self.settings.update_interval),
            "ClassAdLifetime": int(self.settings.ad_lifetime),
            "RoostPid": os.getpid(),
        }

    def advertise(self) -> Deferred | None:
        """Make the daemon's ad and send it (a daemon whose ad needs slow work, such as
        counting its queue, overrides this to do that work off the reactor)."""
        return self.advertise_self(self.own_ad())

    def advertise_self(self, ad: dict) -> Deferred | None:
        """Send the daemon's ad to the collector (the collector overrides this)."""
        if not self.has_collector():
            return None
        return self._collector_client().call(ADVERTISE, {"ads": [ad]}, ad_type=self.settings.ad_type)

    def has_collector(self) -> bool:
        """Whether the daemon has a collector to advertise to (``COLLECTOR_HOST``); logs
        that nothing is sent when it has none."""
        if not self.settings.collector_host:
            _log.info("{daemon}: no COLLECTOR_HOST, not advertising", daemon=self.settings.daemon_type)
        return bool(self.settings.collector_host)

    def daemon_token(self, lifetime: float | None = None) -> str:
        """A DAEMON token naming this daemon (``schedd@pool``), minted with the pool key
        and reused for half its lifetime (default ``CLASSAD_LIFETIME``); on a host that
        joined the pool, the token it was given (``startd@hostB``)."""
        return self.credentials.daemon_token(f"{self.settings.daemon_type.lower()}@{self.settings.trust_domain}",
                                             lifetime or self.settings.ad_lifetime, self.reactor.seconds())

    def revocation_source(self) -> Callable[[str], Deferred] | None:
        """Where this daemon reads the pool's revocations: None for the pool's revocation
        file (the central manager's daemons and a personal pool's, which hold the signing
        key), else the collector, asked with this daemon's token (a host that joined)."""
        if not self._asks_collector():
            return None

        def fetch(_path: str) -> Deferred:
            return self._collector_client().call(REVOCATIONS).addCallback(lambda answer: answer.get("text"))
        return fetch

    def trust_source(self) -> Callable[[], Deferred] | None:
        """Where this daemon reads the pools its pool trusts for flocking: None for the
        central manager's ``POOL_TRUST_DIR`` (its daemons hold the signing key), else the
        collector's ``GET /v1/trust``, asked with this daemon's token (a host that joined)."""
        if not self._asks_collector():
            return None

        def fetch() -> Deferred:
            return self._collector_client().call(TRUST).addCallback(pools_from_wire, "the collector's trust list")
        return fetch

    def _asks_collector(self) -> bool:
        """Whether this daemon reads the pool's shared security state from the collector:
        it holds no signing key (its host joined) and is not the collector."""
        return self.key is None and bool(self.settings.collector_host) and self.settings.daemon_type != "COLLECTOR"

    def _collector_client(self) -> AsyncClient:
        return AsyncClient(self.settings.collector_host, token=self.daemon_token(),
                           timeout=self.settings.request_timeout,
                           **({"http": self._http} if self._http is not None else {}))

    # --- lifecycle ---

    @property
    def address(self) -> str:
        """``host:port`` of the listener (port 0 before it is open), ``host:port?tls=1`` when it serves TLS."""
        port = self.port.getHost().port if self.port is not None else 0
        return str(Address(self.settings.interface, port, tls=self.settings.tls.serves_tls))

    def startService(self) -> None:
        """Open the listener, publish the address and start advertising."""
        super().startService()
        self.start_time = self.reactor.seconds()
        resource = ApiResource(self.route_table(), token_verifier(self.credentials.verify_key, self.reactor),
                               cooperator=sharing_cooperator(self.reactor))
        site = make_site(resource, max_body=self.settings.max_body, timeout=self.settings.request_timeout,
                         clock=self.reactor, log_requests=self.settings.log_requests)
        bind = ALL_INTERFACES if self.settings.bind_all else self.settings.interface
        self.port = listen(self.reactor, self.settings.port, site, bind, daemon_tls(self.settings.tls))
        write_address_file(self.settings.address_file, self.address)
        _log.info("{daemon} listening on {address}", daemon=self.settings.daemon_type, address=self.address)
        self._advertiser.start(self.settings.update_interval, now=True)

    def stopService(self) -> Deferred:
        """Stop advertising, close the listener and remove the address file."""
        if self._advertiser.running:
            self._advertiser.stop()
        closing = maybeDeferred(self.port.stopListening) if self.port is not None else succeed(None)
        closing.addCallback(lambda _: service.MultiService.stopService(self))
        closing.addCallback(lambda _: remove_quietly(self.settings.address_file))
        closing.addCallback(lambda _: _log.info("{daemon} stopped", daemon=self.settings.daemon_type))
        return closing

    def _ping(self, _request) -> JsonReply:
        return JsonReply({"daemon": self.settings.daemon_type, "address": self.address, "pid": os.getpid()})

    def _advertise_quietly(self) -> Deferred | None:
        """Advertise once; a failure is logged and the loop carries on."""
        try:
            sent = self.advertise()
        except Exception:
            _log.failure("{daemon}: advertising failed", daemon=self.settings.daemon_type)
            return None
        if isinstance(sent, Deferred):
            sent.addErrback(lambda failure: _log.warn(
                "{daemon}: advertising to the collector failed: {why}",
                daemon=self.settings.daemon_type, why=failure.getErrorMessage(),
            ))
        return None


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` under a temporary name and rename it into place, so
    a reader sees the old file or the whole new one, never half of it."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    partial = f"{path}.{os.getpid()}.tmp"
    with open(partial, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(partial, path)


def write_address_file(path: str, address: str) -> None:
    """Write ``<host:port>`` to ``path`` atomically."""
    write_atomically(path, f"<{address}>\n")


def remove_quietly(path: str) -> None:
    """Remove ``path`` if it is there."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


ServiceFactory = Callable[[DaemonSettings, object, Config], DaemonService]
