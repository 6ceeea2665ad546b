"""The collector daemon: the store, its routes and metrics, the expiry sweep, and
its own Collector ad, which it parses and stores directly instead of sending to itself."""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable

from twisted.internet import task
from twisted.logger import Logger

from collector.joining import JoinRoutes
from collector.metrics import CollectorMetrics
from collector.ownership import NO_FLOCKING, FlockPolicy
from collector.reactor_lag import ReactorLag
from collector.revocations import RevocationRoutes
from collector.routes import CollectorRoutes
from collector.store import AdStore
from collector.trust import TrustRoutes
from daemoncore.config import Config
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.security.pool_trust import PROCESS_TRUSTED_POOLS, TrustedPools, trust_dir
from daemoncore.security.revocation import revocation_file
from daemoncore.security.tls import CA_KEY_FILE, Authority, load_authority
from daemoncore.wire.adcodec import ad_from_json

DEFAULT_SWEEP_SECONDS = 10.0

_log = Logger()


class CollectorService(DaemonService):
    """A collector: ads in memory, expired by ``ClassAdLifetime``, swept periodically."""

    def __init__(self, settings: DaemonSettings, reactor, key: bytes | None = None,
                 sweep_interval: float = DEFAULT_SWEEP_SECONDS, authority: Authority | None = None,
                 revocation_path: str | None = None, trust_directory: str | None = None,
                 flock: FlockPolicy = NO_FLOCKING, freeze_held: bool = False,
                 cpu_seconds: Callable[[], float] | None = None) -> None:
        super().__init__(settings, reactor, key)
        self._freeze_held = freeze_held
        self._lag = None if cpu_seconds is None else ReactorLag(reactor, cpu_seconds, self.metrics_registry)
        self._joins = JoinRoutes(self.key, settings.trust_domain, reactor, authority, revocation_path)
        self._revocations = RevocationRoutes(revocation_path, reactor)
        self._trust = TrustRoutes(trust_directory, reactor)
        self.store = AdStore(reactor, default_lifetime=settings.ad_lifetime)
        self.metrics = CollectorMetrics(self.store, self.metrics_registry)
        self._routes = CollectorRoutes(self.store, self.metrics, flock)
        self._sweep_interval = sweep_interval
        self._sweeper = task.LoopingCall(self._sweep)
        self._sweeper.clock = reactor

    def handlers(self) -> dict:
        return {**self._routes.handlers(), **self._joins.handlers(), **self._revocations.handlers(),
                **self._trust.handlers()}

    def own_ad(self) -> dict:
        ad = super().own_ad()
        ad.update({f"{kind}Ads": count for kind, count in self.store.counts().items() if kind != "Collector"})
        return ad

    def advertise_self(self, ad: dict) -> None:
        """Store the collector's own ad as any advertised ad is stored: parsed, so
        constraints over type Any evaluate in it like in every other ad."""
        wire = {**ad, "LastHeardFrom": int(self.reactor.seconds())}
        self.store.update("Collector", ad_from_json(wire, "the collector's own ad"), wire)

    def startService(self) -> None:
        super().startService()
        self._sweeper.start(self._sweep_interval, now=False)
        if self._lag is not None:
            self._lag.start()

    def stopService(self):
        if self._sweeper.running:
            self._sweeper.stop()
        if self._lag is not None:
            self._lag.stop()
        return super().stopService()

    def _sweep(self) -> None:
        try:
            dropped = self.store.expire()
        except Exception:
            _log.failure("collector: expiry sweep failed")
            return
        if dropped:
            _log.info("collector: {dropped} ads expired", dropped=dropped)
        if self._freeze_held:
            freeze_held_objects()


def freeze_held_objects() -> None:
    """Leave every object alive now out of Python's later cyclic garbage collections.

    A full collection walks every object that can hold others: at 100,000 stored ads
    that is 0.3 s or more with the reactor held, every minute or so as ads are replaced.
    The store's ads hold no reference cycles, so reference counting frees a frozen ad
    when it is replaced or expires, and collections then walk only what was made since
    the last sweep. The cost: a reference cycle alive at a sweep and dropped later
    (rare: the collector's own structures break their cycles) stays in memory.
    """
    gc.freeze()


def build_collector(settings: DaemonSettings, reactor, config: Config) -> CollectorService:
    """The collector for ``settings``, with the sweep interval from config.

    Raises:
        ConfigError: ``COLLECTOR_SWEEP_INTERVAL`` is not a duration.
        SigningKeyError: the pool signing key cannot be loaded.
    """
    sweep = config.param_duration("COLLECTOR_SWEEP_INTERVAL", DEFAULT_SWEEP_SECONDS)
    return CollectorService(settings, reactor, sweep_interval=sweep, authority=pool_authority(config),
                            revocation_path=revocation_file(config), trust_directory=trust_dir(config),
                            flock=flock_policy(config), freeze_held=True, cpu_seconds=time.thread_time)


def flock_policy(config: Config, trusted: TrustedPools = PROCESS_TRUSTED_POOLS) -> FlockPolicy:
    """``FLOCK_FROM`` (the schedds of other pools allowed to advertise here), each checked
    against the pools this process trusts now."""
    return FlockPolicy(tuple(config.param_list("FLOCK_FROM")), lambda pool: trusted.get(pool) is not None)


def pool_authority(config: Config) -> Authority | None:
    """The pool CA kept beside ``AUTH_SSL_SERVER_CAFILE`` (its key there too), which signs
    the certificates of joining hosts; None when this collector holds no CA key.

    Raises:
        CertificateError: the CA files are there but unusable.
    """
    ca_file = config.param("AUTH_SSL_SERVER_CAFILE")
    if not ca_file or not os.path.exists(os.path.join(os.path.dirname(ca_file), CA_KEY_FILE)):
        return None
    return load_authority(os.path.dirname(ca_file))
