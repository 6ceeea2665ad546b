"""The ``WEB`` daemon: the site on the pool's TLS and loopback rules, its worker
threads, the sampler and its store. It listens like every daemon (``WEB_PORT``, the
address file ``.web_address`` in the log directory) and answers ``/v1/ping`` for the
master, but serves HTML, not the JSON API, and advertises nothing."""

from __future__ import annotations

import getpass
import os
import sqlite3

from twisted.internet.defer import maybeDeferred
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool

from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings, write_address_file
from daemoncore.network_interface import ALL_INTERFACES
from daemoncore.security.tls_server import daemon_tls
from daemoncore.security.tokens import issue_token
from daemoncore.wire import auth
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.errors import Forbidden, Unauthenticated
from daemoncore.wire.server import make_site
from daemoncore.wire.tls_port import listen
from web.access import loopback_default
from web.metrics import WebMetrics
from web.reader import Limits, PoolReader
from web.sampler import Sampler
from web.site import SiteSettings, WebSite
from web.snapshot import SnapshotKeeper
from web.store import HistoryStore, rows_for_age

_log = Logger()

#: The site's requests are small: a login form at most.
MAX_BODY_BYTES = 64 * 1024
#: How long the owner's READ token lives; a new one is made at half of it.
OWNER_TOKEN_SECONDS = 3600.0
#: How long after one read of the pool the site reads it again (``WEB_SNAPSHOT_INTERVAL``).
DEFAULT_SNAPSHOT_SECONDS = 2.0


class WebService(DaemonService):
    """The web site daemon."""

    def __init__(self, settings: DaemonSettings, reactor, site_settings: SiteSettings, store_path: str,
                 sample_interval: float, snapshot_interval: float = DEFAULT_SNAPSHOT_SECONDS,
                 key: bytes | None = None) -> None:
        super().__init__(settings, reactor, key)
        self.site_settings = site_settings
        self.threads = ThreadPool(minthreads=0, maxthreads=site_settings.threads + 1, name="web")
        self.store = HistoryStore(store_path, rows_for_age(sample_interval))
        self._owner: tuple[str, float] | None = None
        self.sampler = Sampler(reactor, self.threads, self.store, self._sampling_reader, sample_interval)
        self.snapshots = SnapshotKeeper(reactor, self.threads, self._sampling_reader, snapshot_interval)
        self._verify = token_verifier(self.credentials.verify_key, reactor)

    def check_token(self, token: str) -> str | None:
        """Why the pool refuses ``token`` for reading (as its daemons would), or None when it accepts it."""
        try:
            auth.require_level(auth.authenticate(f"Bearer {token}", self._verify, "READ"), "READ",
                               "reading the web site")
        except (Unauthenticated, Forbidden) as exc:
            return str(exc)
        return None

    def advertise_self(self, ad: dict) -> None:
        """The site advertises nothing: it is found through its address file."""
        return None

    def owner_token(self) -> str | None:
        """A READ token for the pool's owner (the user running this daemon), made with the
        pool's signing key; None on a host that holds none."""
        if self.key is None:
            return None
        now = self.reactor.seconds()
        if self._owner is None or now >= self._owner[1]:
            identity = f"{getpass.getuser()}@{self.settings.trust_domain}"
            token = issue_token(self.key, identity, ["READ"], lifetime=OWNER_TOKEN_SECONDS, now=now)
            self._owner = (token, now + OWNER_TOKEN_SECONDS / 2)
        return self._owner[0]

    def _sampling_reader(self) -> PoolReader:
        return PoolReader(self.site_settings.collector, self.owner_token() or self.daemon_token(),
                          self.site_settings.limits, self.site_settings.timeout)

    def startService(self) -> None:
        """Start the threads, listen, publish the address and start sampling."""
        self.running = 1
        self.start_time = self.reactor.seconds()
        self.threads.start()
        resource = WebSite(self.site_settings, self.reactor, self.threads, self.store, self.owner_token,
                           self.reactor.seconds, self.snapshots, self.check_token,
                           metrics=WebMetrics(self.metrics_registry, lambda: self.snapshots.last_duration))
        site = make_site(resource, max_body=MAX_BODY_BYTES, timeout=self.settings.request_timeout,
                         clock=self.reactor, log_requests=self.settings.log_requests)
        bind = ALL_INTERFACES if self.settings.bind_all else self.settings.interface
        self.port = listen(self.reactor, self.settings.port, site, bind, daemon_tls(self.settings.tls))
        write_address_file(self.settings.address_file, self.address)
        _log.info("WEB serving {url}", url=site_url(self.address))
        if not os.environ.get("ROOST_MASTER_PID"):
            print(f"Roost web site at {site_url(self.address)} (Ctrl-C stops it)", flush=True)  # roost web
        self.sampler.start()
        self.snapshots.start()

    def stopService(self):
        """Stop sampling, close the listener, the threads and the store."""
        self.sampler.stop()
        self.snapshots.stop()
        closing = maybeDeferred(super().stopService)
        closing.addBoth(lambda result: (self.threads.stop(), self.store.close(), result)[-1])
        return closing


def site_url(address: str) -> str:
    """``http://host:port/`` (``https`` under TLS) for a daemon address ``host:port[?tls=1]``."""
    text = address.strip().strip("<>")
    host, _, query = text.partition("?")
    return f"{'https' if 'tls=1' in query else 'http'}://{host}/"


def build_web(settings: DaemonSettings, reactor, config: Config) -> WebService:
    """The web daemon for ``settings``, with the ``WEB_*`` knobs.

    Raises:
        ConfigError: a knob has the wrong type, or there is no collector to read.
    """
    if not settings.collector_host:
        raise ConfigError("the web site needs the pool's collector: set COLLECTOR_HOST (the master sets it "
                          "for the daemons it starts)")
    interval = config.param_duration("WEB_SAMPLE_INTERVAL", 60)
    snapshot = config.param_duration("WEB_SNAPSHOT_INTERVAL", DEFAULT_SNAPSHOT_SECONDS)
    for name, value in (("WEB_SAMPLE_INTERVAL", interval), ("WEB_SNAPSHOT_INTERVAL", snapshot)):
        if value <= 0:
            raise ConfigError(f"{name} must be a positive duration, not {value}")
    allow = config.param_bool("WEB_ALLOW_LOOPBACK_WITHOUT_TOKEN",
                              loopback_default(settings.interface, settings.bind_all))
    limits = Limits(slots=config.param_int("WEB_MAX_SLOTS", Limits().slots),
                    jobs=config.param_int("WEB_MAX_JOBS", Limits().jobs))
    if limits.slots < 1 or limits.jobs < 1:
        raise ConfigError(f"WEB_MAX_SLOTS and WEB_MAX_JOBS must be at least 1 (they are {limits.slots} and {limits.jobs})")
    site = SiteSettings(collector=settings.collector_host, loopback_allowed=bool(allow),
                        tls=settings.tls.serves_tls, limits=limits, timeout=settings.request_timeout,
                        metrics_require_authentication=settings.metrics_require_authentication)
    store = config.param("WEB_HISTORY_FILE") or os.path.join(config.param("SPOOL") or config.param("LOG", "."),
                                                             "web_history.sqlite")
    try:
        os.makedirs(os.path.dirname(store) or ".", mode=0o700, exist_ok=True)
        return WebService(settings, reactor, site, store, interval, snapshot)
    except (sqlite3.Error, OSError) as exc:
        raise ConfigError(f"WEB_HISTORY_FILE {store} cannot be used as the site's history ({exc}): name a file "
                          f"in a directory this daemon may write, or remove a file that is not an SQLite database") \
            from None
