"""Expansions of submit descriptions the schedd has seen before, reused while they
cannot differ: a loop submitting one description again and again (the bindings'
``Schedd.submit`` in a loop, DAGMan's node jobs) pays for one expansion, not one
per submit.

A submit's expansion depends on its text, owner, submit directory, environment and
measured file sizes (all in the key), and otherwise only on the cluster id and the
time of submission (``$(Cluster)``, ``$(YEAR)``, ``$(SUBMIT_TIME)`` ...) and on
``$RANDOM_*`` draws. A description is reused only once it has shown it depends on
none of those: at its second sighting it is expanded for real and once more with
a cluster id and a date that differ in every part (year, month, day, second), and
kept when both give the same ads apart from the attributes the schedd sets itself
(ClusterId, QDate ...), neither having drawn a random value. Errors are never
kept, so a wrong description is refused with the same message every time."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping

from schedd.intake import ClusterToStore, without_schedd_set
from schedd.submit import macros

#: Descriptions remembered (the least recently used is forgotten first).
MAX_KEPT = 64
#: Larger clusters are expanded each time (their expansion is kept out of memory).
MAX_KEPT_PROCS = 64
#: Longer descriptions (text, environment and file sizes) are expanded each time, so
#: what is kept stays under about MAX_KEPT times this many characters.
MAX_KEPT_CHARS = 65536
#: The probe's date is this far from the real one: another year, month, day and second.
_PROBE_SECONDS = 400 * 86400 + 32 * 86400 + 86400 + 1
#: The probe's cluster id is this far from the real one.
_PROBE_CLUSTERS = 1_000_003

Expand = Callable[[int, int], ClusterToStore]


class ExpansionCache:
    """Remembers per description whether its expansion is steady, and if so the expansion."""

    def __init__(self, kept: int = MAX_KEPT) -> None:
        self._kept = kept
        # key -> None (seen once) or the steady expansion
        self._seen: OrderedDict[tuple, ClusterToStore | None] = OrderedDict()

    def holds(self, key: tuple) -> bool:
        """Whether the expansion of the description ``key`` names is kept (a small one)."""
        return self._seen.get(key) is not None

    def expansion(self, key: tuple, cluster_id: int, now: int, expand: Expand) -> ClusterToStore:
        """The expansion of the description ``key`` names for ``cluster_id`` at ``now``:
        the kept one when it is steady, else ``expand(cluster_id, now)``.

        Raises:
            SubmitError, IntakeError: whatever ``expand`` raises.
        """
        if key in self._seen:
            self._seen.move_to_end(key)
            steady = self._seen[key]
            if steady is not None:
                return steady
            fresh, steady = _probed(cluster_id, now, expand)
            if steady:
                self._seen[key] = fresh
            return fresh
        fresh = expand(cluster_id, now)
        if len(fresh.proc_ads) <= MAX_KEPT_PROCS and _chars(key) <= MAX_KEPT_CHARS:
            self._seen[key] = None
            if len(self._seen) > self._kept:
                self._seen.popitem(last=False)
        return fresh


def description_key(text: str, owner: str, iwd: str, environ: Mapping[str, str],
                    file_sizes: Mapping[str, int]) -> tuple:
    """What, besides cluster id, time and chance, a description's expansion depends on."""
    return (text, owner, iwd, tuple(sorted(environ.items())), tuple(sorted(file_sizes.items())))


def _chars(key: tuple) -> int:
    """About how many characters a key holds."""
    text, owner, iwd, environ, file_sizes = key
    return (len(text) + len(owner) + len(iwd) + sum(len(k) + len(v) for k, v in environ)
            + sum(len(path) + 20 for path, _ in file_sizes))


def _probed(cluster_id: int, now: int, expand: Expand) -> tuple[ClusterToStore, bool]:
    """``expand(cluster_id, now)`` and whether it is steady: no random draw, and the same
    ads as an expansion for another cluster at another date."""
    draws = macros.random_draws()
    fresh = expand(cluster_id, now)
    if len(fresh.proc_ads) > MAX_KEPT_PROCS or macros.random_draws() != draws:
        return fresh, False
    probe = expand(cluster_id + _PROBE_CLUSTERS, now + _PROBE_SECONDS)
    steady = macros.random_draws() == draws and _same_ads(fresh, probe)
    return fresh, steady


def _same_ads(a: ClusterToStore, b: ClusterToStore) -> bool:
    """Whether two expansions store the same jobs (the schedd-set attributes aside)."""
    if len(a.proc_ads) != len(b.proc_ads):
        return False
    pairs = zip((a.cluster_ad, *a.proc_ads), (b.cluster_ad, *b.proc_ads))
    return all(without_schedd_set(x) == without_schedd_set(y) for x, y in pairs)
