"""``Collector``: query, locate and advertise ads, with the names of HTCondor's
``htcondor2.Collector``, over the collector's routes and a blocking client."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from bindings.enums import AdType, DaemonType
from bindings.pool import Pool, find_pool, pool_token
from daemoncore.wire import collector_routes as api
from daemoncore.wire.blocking_client import BlockingClient

if TYPE_CHECKING:  # the ClassAd library loads when an ad is made, not to find a daemon's address
    import classad

DEFAULT_TIMEOUT = 30.0


class Collector:
    """A pool's collector: ``Collector()`` finds the pool as the CLI does; ``Collector("host:port")`` names one."""

    def __init__(self, pool: str | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.pool: Pool = find_pool(pool)
        self._client = BlockingClient(self.pool.collector, token=pool_token(self.pool), timeout=timeout)

    @property
    def address(self) -> str:
        """``host:port`` of the collector."""
        return self.pool.collector

    def __repr__(self) -> str:
        return f"Collector({self.pool.collector!r})"

    def query(self, ad_type: AdType = AdType.Startd, constraint: object = True, projection: Iterable[str] = (),
              statistics: str | None = None, *, limit: int | None = None) -> list[classad.ClassAd]:
        """The ads of ``ad_type`` for which ``constraint`` is true, with only the ``projection`` attributes.

        ``statistics`` is accepted for compatibility and ignored.

        Raises:
            RemoteError: the collector refused the query (a bad constraint is a 400 naming the error).
            Unreachable: the collector does not answer.
        """
        from daemoncore.wire.adcodec import ad_from_json

        return [ad_from_json(wire, "ad from the collector") for wire in self._wire_query(ad_type, constraint,
                                                                                         projection, limit)]

    def _wire_query(self, ad_type: AdType | str, constraint: object, projection: Iterable[str] = (),
                    limit: int | None = None) -> Iterator[dict]:
        """The matching ads as the collector sends them (HTCondor's JSON form), undecoded."""
        body: dict = {"constraint": constraint_text(constraint), "projection": list(projection)}
        if limit is not None:
            body["limit"] = limit
        return self._client.stream(api.QUERY, body, ad_type=_ad_type(ad_type))

    def locate(self, daemon_type: DaemonType, name: str | None = None) -> classad.ClassAd:
        """The ad of one daemon of ``daemon_type`` (named ``name``, else the first found).

        Raises:
            ValueError: no such daemon is known to the collector.
        """
        from daemoncore.wire.adcodec import ad_from_json

        return ad_from_json(self.locate_wire(daemon_type, name), "ad from the collector")

    def locate_wire(self, daemon_type: DaemonType, name: str | None = None) -> dict:
        """:meth:`locate`'s ad as the collector sends it (HTCondor's JSON form), undecoded:
        what finding a daemon's address needs, without loading the ClassAd library.

        Raises:
            ValueError: no such daemon is known to the collector.
        """
        if name:
            from classad import quote

            constraint = f"Name == {quote(name)}"
        else:
            constraint = True
        found = list(self._wire_query(_daemon_ad_type(daemon_type), constraint, limit=1))
        if found:
            return found[0]
        if _daemon_ad_type(daemon_type) == AdType.Collector and not name:
            return {"MyType": "Collector", "Name": self.address, "MyAddress": f"<{self.address}>"}
        what = f"{daemon_type.name} daemon" + (f" named {name!r}" if name else "")
        raise ValueError(f"unable to locate a {what}: the collector at {self.address} has no ad for it")

    def locateAll(self, daemon_type: DaemonType) -> list[classad.ClassAd]:
        """The ads of every daemon of ``daemon_type``."""
        return self.query(_daemon_ad_type(daemon_type))

    def advertise(self, ads: Iterable[object], command: str = "UPDATE_STARTD_AD", use_tcp: bool = True) -> None:
        """Send ``ads`` to the collector with ``command`` (``UPDATE_*_AD`` or ``INVALIDATE_*_ADS``).

        Raises:
            ValueError: ``command`` is not a collector command, or an invalidation ad names nothing.
            RemoteError: the collector refused (advertising needs a DAEMON token: 403 otherwise).
            Unreachable: the collector does not answer.
        """
        from collector.adtypes import parse_command
        from daemoncore.wire.adcodec import ad_to_json

        parsed = parse_command(command)
        wires = [ad_to_json(ad) if not isinstance(ad, dict) else dict(ad) for ad in ads]
        for ad_type, group in _by_type(wires, parsed.ad_type).items():
            if parsed.action == "update":
                self._client.call(api.ADVERTISE, {"ads": group}, ad_type=ad_type)
            else:
                for body in _invalidations(group):
                    self._client.call(api.INVALIDATE, body, ad_type=ad_type)


def constraint_text(constraint: object) -> str:
    """A constraint given as a bool, a string or an ``ExprTree``, as expression text."""
    if constraint is True or constraint is None:
        return "true"
    if constraint is False:
        return "false"
    text = str(constraint).strip()
    return text or "true"


def _ad_type(ad_type: AdType | str) -> str:
    if isinstance(ad_type, AdType):
        return ad_type.collector_type
    return str(ad_type)


def _daemon_ad_type(daemon_type: DaemonType) -> AdType | str:
    if not isinstance(daemon_type, DaemonType):
        raise ValueError(f"{daemon_type!r} is not a DaemonType (e.g. DaemonType.Schedd)")
    if daemon_type is DaemonType.Collector:
        return AdType.Collector
    return daemon_type.collector_type


def _by_type(wires: list[dict], ad_type: str | None) -> dict[str, list[dict]]:
    if ad_type is not None:
        return {ad_type: wires}
    grouped: dict[str, list[dict]] = defaultdict(list)
    for index, wire in enumerate(wires):
        my_type = next((value for key, value in wire.items() if key.lower() == "mytype"), None)
        if not isinstance(my_type, str):
            raise ValueError(f"ad {index} has no MyType, which a generic command needs to know its type")
        grouped[my_type].append(wire)
    return grouped


def _invalidations(group: list[dict]) -> list[dict]:
    names = [value for wire in group for key, value in wire.items() if key.lower() == "name"]
    constraints = [value for wire in group for key, value in wire.items() if key.lower() == "requirements"]
    bodies = [{"names": [str(name) for name in names]}] if names else []
    bodies += [{"constraint": _unwrapped(text)} for text in constraints]
    if not bodies:
        raise ValueError("an invalidation ad needs a Name or a Requirements expression saying which ads to drop")
    return bodies


def _unwrapped(value: object) -> str:
    text = str(value)
    if text.startswith("/Expr(") and text.endswith(")/"):
        return text[len("/Expr("):-2]
    return text
