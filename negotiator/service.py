"""The negotiator daemon: the accountant in SQLite under ``SPOOL``, the cycle driver
on the reactor's clock, the priority routes, the last cycle's waiting requests and
their reasons, and a Negotiator ad with the last cycle's statistics."""

from __future__ import annotations

import os

import attrs
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger

from daemoncore.config import Config, ConfigError
from daemoncore.daemon import DaemonService, DaemonSettings
from daemoncore.security.pool_trust import PROCESS_TRUSTED_POOLS, TrustedPools
from daemoncore.wire.async_client import AsyncClient
from negotiator.accountant import Accountant
from negotiator.concurrency import limits_ad
from negotiator.cycle import negotiate
from negotiator.db import AccountantDatabase
from negotiator.driver import Compute, CycleDriver, compute_here, with_heap_frozen
from negotiator.errors import NegotiatorError
from negotiator.last_cycle import LastCycle, explain_cycle
from negotiator.metrics import NegotiatorMetrics
from negotiator.routes import NegotiatorRoutes
from negotiator.settings import NegotiatorSettings

_log = Logger()


class NegotiatorService(DaemonService):
    """A negotiator: cycles every ``NEGOTIATOR_INTERVAL``, priorities on request."""

    def __init__(self, settings: DaemonSettings, reactor, negotiator_settings: NegotiatorSettings,
                 key: bytes | None = None, http=None, compute: Compute = compute_here,
                 database: AccountantDatabase | None = None,
                 trusted_pools: TrustedPools = PROCESS_TRUSTED_POOLS) -> None:
        super().__init__(settings, reactor, key, http)
        self.negotiator_settings = negotiator_settings
        self.database = database if database is not None else open_database(negotiator_settings.database_file)
        self.accountant = Accountant(self.database, reactor, negotiator_settings.accountant)
        #: The last cycle's waiting requests and why each waits (GET /v1/negotiator/last-cycle).
        self.last_cycle: LastCycle | None = None
        self.driver = CycleDriver(negotiator_settings, self.accountant, reactor, self.client_for,
                                  lambda: self.settings.collector_host, self._explaining(compute),
                                  trusted_pools=lambda: trusted_pools.current)
        self._routes = NegotiatorRoutes(self.accountant, self.driver.reschedule, lambda: self.last_cycle)
        self.driver.observers.append(NegotiatorMetrics(self.metrics_registry).observe)
        self.driver.observers.append(self._advertise_new_limit_use)
        self._advertised_limits: dict = {}

    def client_for(self, address: str, token: str | None = None) -> AsyncClient:
        """A client for the daemon at ``address`` carrying ``token`` (another pool's, to
        call a schedd flocking in), else a fresh DAEMON token of the negotiator's."""
        if token is None:
            token = self.daemon_token(max(self.settings.request_timeout * 4, 300))
        extra = {"http": self._http} if self._http is not None else {}
        return AsyncClient(address, token=token, timeout=self.settings.request_timeout, **extra)

    def handlers(self) -> dict:
        return self._routes.handlers()

    def _explaining(self, compute: Compute) -> Compute:
        """``compute`` that, when it runs the cycle, also works out (in the same worker)
        why each request left jobs idle, and keeps that as :attr:`last_cycle`."""
        clock = self.reactor

        def run(function, *args):
            if function is not negotiate:
                return compute(function, *args)
            started = clock.seconds()

            def negotiate_and_explain(*cycle_args):
                result = with_heap_frozen(negotiate, *cycle_args)
                slots, submitters, accountant, settings = cycle_args[:4]
                try:
                    return result, explain_cycle(result, slots, submitters, accountant, settings, started, started)
                except Exception:  # the explanation must never cost the cycle its matches
                    _log.failure("negotiator: explaining the cycle's waiting requests failed")
                    return result, None

            ran = compute(negotiate_and_explain, *args)
            ran.addCallback(self._keep_last_cycle, clock.seconds)
            return ran

        return run

    def _keep_last_cycle(self, ran: tuple, now) -> object:
        result, explained = ran
        self.last_cycle = None if explained is None else attrs.evolve(explained, ended=now())
        return result

    def own_ad(self) -> dict:
        ad = super().own_ad()
        ad["NegotiatorInterval"] = int(self.negotiator_settings.interval)
        if self.driver.reports:
            last = self.driver.reports[-1]
            ad.update({
                "LastNegotiationCycleTime0": int(last.started), "LastNegotiationCycleEnd0": int(last.ended),
                "LastNegotiationCycleDuration0": round(last.duration, 3),
                "LastNegotiationCycleMatches0": last.matches,
                "LastNegotiationCycleActiveSubmitterCount0": last.submitters,
                "LastNegotiationCycleCandidateSlots0": last.slots,
                "LastNegotiationCycleProblems0": len(last.problems),
            })
        ad.update(limits_ad(self.negotiator_settings.cycle.concurrency, self.driver.concurrency_in_use))
        return ad

    def _advertise_new_limit_use(self, _report) -> None:
        """Send the ad again at once when a concurrency limit's use changed, so
        ``roost userprio -l`` shows it without waiting for ``UPDATE_INTERVAL``."""
        used = dict(self.driver.concurrency_in_use)
        if used != self._advertised_limits and self.running:
            self._advertised_limits = used
            self._advertise_quietly()

    def startService(self) -> None:
        super().startService()
        self.driver.start()

    def stopService(self):
        stopping = self.driver.stop()
        stopping.addCallback(lambda _: DaemonService.stopService(self))
        stopping.addBoth(self._close_database)
        return stopping

    def _close_database(self, result):
        try:
            self.database.close()
        except Exception:
            _log.failure("negotiator: closing the accountant database failed")
        return result


def open_database(path: str) -> AccountantDatabase:
    """The accountant's SQLite file at ``path``, its directory made if need be.

    Raises:
        ConfigError: the file cannot be made or opened.
    """
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return AccountantDatabase(path)
    except Exception as exc:  # sqlite3 and OS errors alike
        raise ConfigError(f"cannot open the accountant database {path} "
                          f"(set ACCOUNTANT_DATABASE_FILE or SPOOL): {exc}") from None


def build_negotiator(settings: DaemonSettings, reactor, config: Config) -> NegotiatorService:
    """The negotiator for ``settings`` with its knobs from ``config``; the cycle's
    matching runs in the reactor's thread pool so the daemon keeps answering.

    Raises:
        ConfigError: a negotiator knob is malformed, or the database cannot be opened.
        SigningKeyError: the pool signing key cannot be loaded.
    """
    try:
        knobs = NegotiatorSettings.from_config(config)
    except NegotiatorError as exc:
        raise ConfigError(str(exc)) from None

    def in_thread(function, *args):
        return deferToThreadPool(reactor, reactor.getThreadPool(), function, *args)

    return NegotiatorService(settings, reactor, knobs, compute=in_thread)
