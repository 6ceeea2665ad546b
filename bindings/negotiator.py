"""``Negotiator``: user priorities with the names of HTCondor's ``htcondor2.Negotiator``,
over the negotiator's routes and a blocking client. The negotiator is found through
the pool's collector (its Negotiator ad's ``MyAddress``)."""

from __future__ import annotations

import classad
from bindings.collector import Collector
from bindings.enums import DaemonType
from bindings.pool import pool_token
from daemoncore.wire import negotiator_routes as api
from daemoncore.wire.blocking_client import BlockingClient

DEFAULT_TIMEOUT = 30.0


class Negotiator:
    """A pool's negotiator: ``Negotiator()`` finds it as the CLI does; ``Negotiator("host:port")``
    names the pool's collector, and a location ad (``Collector().locate(DaemonType.Negotiator)``)
    names the negotiator itself."""

    def __init__(self, pool: str | classad.ClassAd | None = None, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if isinstance(pool, classad.ClassAd):
            collector = Collector(timeout=timeout)
            ad = pool
        else:
            collector = Collector(pool, timeout=timeout)
            ad = collector.locate(DaemonType.Negotiator)
        address = ad.get("MyAddress")
        if not isinstance(address, str) or not address.strip():
            raise ValueError("the negotiator's ad has no MyAddress string: is a negotiator running in this pool?")
        self.address = address.strip().strip("<>")
        self._client = BlockingClient(self.address, token=pool_token(collector.pool), timeout=timeout)

    def __repr__(self) -> str:
        return f"Negotiator({self.address!r})"

    def getPriorities(self, rollup: bool = False) -> list[classad.ClassAd]:
        """One ad per user and accounting group (``Name``, ``Priority`` (real),
        ``EffectivePriority``, ``PriorityFactor``, ``ResourcesUsed``, ``AccumulatedUsage``
        in core-seconds, ``BeginUsageTime``, ``LastUsageTime``, ``IsAccountingGroup``...),
        best effective priority first. Groups already hold their members' usage, so
        ``rollup`` changes nothing.

        Raises:
            RemoteError: the negotiator refused (401 without a token).
            Unreachable: the negotiator does not answer.
        """
        rows, _ = self.priority_report()
        return [classad.ClassAd({k: v for k, v in row.items() if v is not None}) for row in rows]

    def priority_report(self) -> tuple[list[dict], float | None]:
        """The priority rows as JSON objects and when the negotiator last updated them
        (a Roost addition, what ``roost userprio`` prints from).

        Raises:
            RemoteError: the negotiator refused. Unreachable: it does not answer.
        """
        answer = self._client.call(api.PRIORITIES)
        if not isinstance(answer, dict) or not isinstance(answer.get("priorities"), list):
            raise ValueError(f"the negotiator at {self.address} answered {answer!r}, not a priority list")
        return answer["priorities"], answer.get("last_update")

    def last_cycle(self, submitter: str | None = None, job: str | None = None) -> dict:
        """The negotiator's last cycle (a Roost addition): each request it left with idle
        jobs and why, each submitter's priority and use, each group's quota, limit and
        use; ``submitter`` and ``job`` (``"cluster.proc"``) narrow the requests.

        Raises:
            RemoteError: the negotiator refused (401 without a token, 400 for a bad job id).
            Unreachable: the negotiator does not answer.
        """
        query = {k: v for k, v in (("submitter", submitter), ("job", job)) if v is not None}
        answer = self._client.call(api.LAST_CYCLE, query=query or None)
        if not isinstance(answer, dict):
            raise ValueError(f"the negotiator at {self.address} answered {answer!r}, not its last cycle")
        return answer

    def setFactor(self, user: str, factor: float) -> None:
        """Set ``user``'s priority factor (1 or more); needs an ADMINISTRATOR token.

        Raises:
            RemoteError: the factor is below 1 (400) or the token is not ADMINISTRATOR (403).
            Unreachable: the negotiator does not answer.
        """
        self._client.call(api.SET_FACTOR, {"name": _user(user), "factor": float(factor)})

    def resetUsage(self, user: str) -> None:
        """Forget ``user``'s usage, giving back the best priority; needs an ADMINISTRATOR token.

        Raises:
            RemoteError: the token is not ADMINISTRATOR (403).
            Unreachable: the negotiator does not answer.
        """
        self._client.call(api.RESET_USAGE, {"name": _user(user)})


def _user(user: str) -> str:
    if not isinstance(user, str) or not user.strip():
        raise ValueError(f"a user is a name such as alice@example.org, not {user!r}")
    return user.strip()
