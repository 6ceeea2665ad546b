"""Sending the schedd's Submitter ads to the flock collectors (``FLOCK_TO``): each
submitter's ad goes to the collectors up to its flock level, with the token the remote
pool gave this pool (``flock@<this pool>``), and its withdrawal when the level falls. A
collector that refuses or does not answer is logged naming the pool and why, and counts
as a failed update for the flock levels (:mod:`schedd.flocking`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from twisted.internet.defer import Deferred, DeferredList
from twisted.logger import Logger

from daemoncore.security.pool_trust import TrustedPool, TrustedPools
from daemoncore.wire.collector_routes import ADVERTISE, INVALIDATE
from schedd.flocking import FlockLevels, pool_key
from schedd.negotiation import submitter_key

_log = Logger()

#: ``client_for(collector address, token)``: a client to call a flock collector with.
ClientFor = Callable[[str, str], object]


def flocked_ads(submitters: list[dict], flocked: Mapping[str, int]) -> list[dict]:
    """The Submitter ads with ``FlockedJobs``: how many of each submitter's jobs run in
    other pools, ``flocked`` keyed by submitter (the ad's Name without its domain)."""
    return [{**ad, "FlockedJobs": flocked.get(submitter_key(ad["Name"]), 0)} for ad in submitters]


# Mutable: remembers which submitters each flock collector holds, and what was logged.
class FlockAdvertiser:
    """Advertises submitters to the flock collectors their levels reach."""

    def __init__(self, levels: FlockLevels, trusted: TrustedPools, client_for: ClientFor) -> None:
        self.levels = levels
        self.trusted = trusted
        self._client_for = client_for
        self._sent: dict[int, set[str]] = {}
        self._untrusted_logged: set[str] = set()

    def effective_flock_list(self) -> str:
        """``EffectiveFlockList``: the flock collectors some submitter is advertised to now."""
        collectors = self.levels.settings.collectors
        return ", ".join(pool_key(collectors[level - 1]) for level in self.levels.effective())

    def advertise(self, submitters: list[dict]) -> Deferred:
        """Bring the flock levels up to date with the submitters' idle jobs and send each
        flock collector the ads of the submitters its level reaches (withdrawing those it
        no longer does). Fires when every call has ended; never fails."""
        self.levels.check({ad["Name"]: int(ad.get("IdleJobs") or 0) for ad in submitters})
        calls = []
        for level, collector in enumerate(self.levels.settings.collectors, start=1):
            pool = self._trusted_pool(pool_key(collector))
            wanted = [ad for ad in submitters if level in self.levels.targets(ad["Name"])]
            if pool is None:
                for ad in wanted:
                    self.levels.update_failed(ad["Name"], level, avoid=False)
                continue
            calls.extend(self._send(level, str(collector), pool, wanted))
        return DeferredList(calls, consumeErrors=True)

    def _trusted_pool(self, collector: str) -> TrustedPool | None:
        pool = self.trusted.by_collector(collector)
        if pool is None and collector not in self._untrusted_logged:
            self._untrusted_logged.add(collector)
            _log.warn("schedd: flock collector {collector} is not trusted: run roost pool trust on both central "
                      "managers; not flocking there", collector=collector)
        elif pool is not None:
            self._untrusted_logged.discard(collector)
        return pool

    def _send(self, level: int, collector: str, pool: TrustedPool, ads: list[dict]) -> list[Deferred]:
        client = self._client_for(pool.collector, pool.token)  # as the pool gave it: says whether it speaks TLS
        names = {ad["Name"] for ad in ads}
        gone = self._sent.get(level, set()) - names
        calls = []
        if ads:
            sent = client.call(ADVERTISE, {"ads": ads}, ad_type="Submitter")
            sent.addCallbacks(self._advertised, self._refused, callbackArgs=(level, names),
                              errbackArgs=(level, pool, collector, sorted(names)))
            calls.append(sent)
        else:
            self._sent[level] = set()
        if gone:
            withdrawn = client.call(INVALIDATE, {"names": sorted(gone)}, ad_type="Submitter")
            withdrawn.addErrback(lambda failure: _log.info(
                "schedd: withdrawing {names} from pool {pool} failed (they expire there): {why}",
                names=", ".join(sorted(gone)), pool=pool.name, why=failure.getErrorMessage()))
            calls.append(withdrawn)
        return calls

    def _advertised(self, _answer, level: int, names: set[str]) -> None:
        self._sent[level] = names
        self.levels.update_succeeded(level)

    def _refused(self, failure, level: int, pool: TrustedPool, collector: str, names: list[str]) -> None:
        _log.warn("schedd: pool {pool} (collector {collector}) refused the Submitter ads of {names}: {why}",
                  pool=pool.name, collector=collector, names=", ".join(names), why=failure.getErrorMessage())
        for name in names:
            self.levels.update_failed(name, level)


__all__ = ["FlockAdvertiser", "flocked_ads"]
