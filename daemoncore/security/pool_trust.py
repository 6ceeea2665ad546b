"""The pools this pool trusts for flocking, and what it holds of each: the other pool's
name (its ``TRUST_DOMAIN``), its collector's address, its CA, and the token the other
pool signed for this pool's daemons to present there.

On the central manager each trusted pool is one 0600 JSON file in ``POOL_TRUST_DIR``
(default ``$(LOCAL_DIR)/trust.d``), written by ``roost pool trust``; the daemons of hosts
that joined the pool have no such directory and fetch the list from their collector
(``GET /v1/trust``). Either way a :class:`TrustWatcher` re-reads it every
``UPDATE_INTERVAL`` into :data:`PROCESS_TRUSTED_POOLS`, the one holder every daemon asks.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

import attrs
from twisted.internet import threads
from twisted.internet.defer import Deferred

from daemoncore.security.errors import SecurityError
from daemoncore.security.refreshing import RefreshingService
from daemoncore.security.tls import parse_certificate
from daemoncore.security.token_files import replace_file
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, parse_address

TRUST_DIR_KNOB = "POOL_TRUST_DIR"
TRUST_DIR_NAME = "trust.d"
POOL_FILE_PREFIX = "pool-"
PENDING_FILE_PREFIX = "pending-"
#: One trusted pool's file is refused above this size, and a directory above this many pools.
MAX_TRUST_FILE_BYTES = 64 * 1024
MAX_TRUSTED_POOLS = 256
_POOL_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,126}[A-Za-z0-9])?")
_OFFER_ID = re.compile(r"[0-9a-f]{8,64}")
_FIELDS = ("name", "collector", "ca_pem", "token", "peer_negotiator", "issued_jti")


class PoolTrustError(SecurityError):
    """A trusted pool's entry cannot be read, written or used; the message says which and why."""


def check_pool_name(name: str) -> str:
    """``name`` when it can name a pool (a ``TRUST_DOMAIN``: letters, digits, ``.``, ``_``, ``-``).

    Raises:
        PoolTrustError: it cannot.
    """
    if not isinstance(name, str) or not _POOL_NAME.fullmatch(name):
        raise PoolTrustError(f"{name!r} is not a pool name (a TRUST_DOMAIN of letters, digits, '.', '_' and '-')")
    return name


def check_offer_id(offer_id: str) -> str:
    """``offer_id`` when it is an offer id (hex digits).

    Raises:
        PoolTrustError: it is not.
    """
    if not isinstance(offer_id, str) or not _OFFER_ID.fullmatch(offer_id):
        raise PoolTrustError(f"{offer_id!r} is not a trust offer id (8 to 64 hex digits)")
    return offer_id


@attrs.frozen
class TrustedPool:
    """Another pool this pool flocks with."""

    #: The other pool's TRUST_DOMAIN.
    name: str
    #: Its central manager's collector, e.g. ``198.18.1.2:9618?tls=1``.
    collector: str
    #: Its CA certificate (PEM text), which its daemons' certificates are checked against.
    ca_pem: str = attrs.field(repr=False)
    #: A token signed by the other pool that this pool's daemons present there.
    token: str = attrs.field(repr=False)
    #: The identity the other pool's negotiator uses here (``negotiator@peer-3f9a``); "" when it has none.
    peer_negotiator: str = ""
    #: The id (jti) of the token this pool issued to the other; "" when none.
    issued_jti: str = ""

    def to_json(self) -> dict:
        """The JSON form, as stored in trust.d."""
        return {name: getattr(self, name) for name in _FIELDS}

    def to_wire(self) -> dict:
        """What ``GET /v1/trust`` tells this pool's daemons (not the id of the token issued)."""
        return {name: getattr(self, name) for name in _FIELDS if name != "issued_jti"}

    @classmethod
    def from_json(cls, data: object, where: str) -> TrustedPool:
        """The trusted pool of JSON ``data`` read from ``where``.

        Raises:
            PoolTrustError: a field is missing or wrong, naming it and ``where``.
        """
        if not isinstance(data, dict):
            raise PoolTrustError(f"{where}: a trusted pool must be a JSON object")
        for name in ("name", "collector", "ca_pem", "token"):
            if not isinstance(data.get(name), str) or not data[name]:
                raise PoolTrustError(f"{where}: {name} is missing or not text")
        for name in ("peer_negotiator", "issued_jti"):
            if not isinstance(data.get(name, ""), str):
                raise PoolTrustError(f"{where}: {name} is not text")
        check_pool_name(data["name"])
        try:
            parse_address(data["collector"], default_port=DEFAULT_COLLECTOR_PORT)
        except ValueError as exc:
            raise PoolTrustError(f"{where}: collector: {exc}") from None
        try:
            parse_certificate(data["ca_pem"].encode("ascii", "replace"), f"{where}: ca_pem")
        except SecurityError as exc:
            raise PoolTrustError(str(exc)) from None
        return cls(**{name: data.get(name, "") for name in _FIELDS})

    def serves(self, address: str) -> bool:
        """Whether ``address`` (``host[:port]``, 9618 by default) is this pool's collector."""
        try:
            mine = parse_address(self.collector, default_port=DEFAULT_COLLECTOR_PORT)
            theirs = parse_address(address, default_port=DEFAULT_COLLECTOR_PORT)
        except ValueError:
            return False
        return (mine.host.lower(), mine.port) == (theirs.host.lower(), theirs.port)


# --- the trust directory ---

def trust_dir(config) -> str:
    """``POOL_TRUST_DIR``, else ``$(LOCAL_DIR)/trust.d``."""
    return config.param(TRUST_DIR_KNOB) or os.path.join(config.param("LOCAL_DIR", "."), TRUST_DIR_NAME)


def pool_file(directory: str, name: str) -> str:
    """The file of trusted pool ``name`` in ``directory``."""
    return os.path.join(directory, f"{POOL_FILE_PREFIX}{check_pool_name(name)}.json")


def save_trusted_pool(directory: str, pool: TrustedPool) -> str:
    """Write ``pool``'s file (0600, atomically, replacing an older entry of that name); its path.

    Raises:
        PoolTrustError: the name is unusable or the file cannot be written.
    """
    path = pool_file(directory, pool.name)
    _write_json(path, pool.to_json())
    return path


def remove_trusted_pool(directory: str, name: str) -> TrustedPool | None:
    """Delete trusted pool ``name``'s file; the entry it held, or None when there was none.

    Raises:
        PoolTrustError: the name is unusable, or the file cannot be read or removed.
    """
    path = pool_file(directory, name)
    try:
        found = _read_pool(path)
    except FileNotFoundError:
        return None
    try:
        os.remove(path)
    except OSError as exc:
        raise PoolTrustError(f"cannot remove {path}: {exc.strerror or exc}") from None
    return found


def read_trusted_pools(directory: str) -> dict[str, TrustedPool]:
    """Every trusted pool in ``directory`` by name (none when it does not exist).

    Raises:
        PoolTrustError: a file is unreadable or malformed, or there are too many.
    """
    try:
        names = sorted(name for name in os.listdir(directory)
                       if name.startswith(POOL_FILE_PREFIX) and name.endswith(".json"))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError as exc:
        raise PoolTrustError(f"cannot list {directory}: {exc.strerror or exc}") from None
    if len(names) > MAX_TRUSTED_POOLS:
        raise PoolTrustError(f"{directory} holds {len(names)} trusted pools, more than {MAX_TRUSTED_POOLS}")
    pools = {}
    for name in names:
        try:
            pool = _read_pool(os.path.join(directory, name))
        except FileNotFoundError:
            continue  # removed while listing
        pools[pool.name] = pool
    return pools


def load_trusted_pools(config) -> dict[str, TrustedPool]:
    """The trusted pools of this central manager's ``POOL_TRUST_DIR``, by name.

    Raises:
        PoolTrustError: a file is unreadable or malformed.
    """
    return read_trusted_pools(trust_dir(config))


def save_pending_offer(directory: str, offer_id: str, issued_jti: str) -> str:
    """Remember an offer this pool made (the id of the token it carries) until its answer comes.

    Raises:
        PoolTrustError: the id is unusable or the file cannot be written.
    """
    path = os.path.join(directory, f"{PENDING_FILE_PREFIX}{check_offer_id(offer_id)}.json")
    _write_json(path, {"offer": offer_id, "issued_jti": issued_jti})
    return path


def take_pending_offer(directory: str, offer_id: str) -> str:
    """The id of the token issued with offer ``offer_id``; the offer is forgotten.

    Raises:
        PoolTrustError: this pool made no such offer (or it was answered already).
    """
    path = os.path.join(directory, f"{PENDING_FILE_PREFIX}{check_offer_id(offer_id)}.json")
    try:
        data = json.loads(_read_limited(path))
    except FileNotFoundError:
        raise PoolTrustError(f"this pool made no trust offer {offer_id} (or it was answered already): "
                             f"run `roost pool trust` here and give its offer to the other pool") from None
    except ValueError:
        raise PoolTrustError(f"{path} is not JSON") from None
    os.remove(path)
    jti = data.get("issued_jti") if isinstance(data, dict) else None
    return jti if isinstance(jti, str) else ""


def _write_json(path: str, data: dict) -> None:
    try:
        replace_file(path, json.dumps(data, indent=1) + "\n", 0o600)
    except OSError as exc:
        raise PoolTrustError(f"cannot write {path}: {exc.strerror or exc}") from None


def _read_limited(path: str) -> bytes:
    """Raises FileNotFoundError, or PoolTrustError when unreadable or too big."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_TRUST_FILE_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise PoolTrustError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_TRUST_FILE_BYTES:
        raise PoolTrustError(f"{path} is over {MAX_TRUST_FILE_BYTES} bytes")
    return data


def _read_pool(path: str) -> TrustedPool:
    try:
        data = json.loads(_read_limited(path))
    except ValueError:
        raise PoolTrustError(f"{path} is not JSON") from None
    return TrustedPool.from_json(data, path)


def pools_from_wire(answer: object, where: str) -> dict[str, TrustedPool]:
    """The trusted pools of a ``GET /v1/trust`` answer, by name.

    Raises:
        PoolTrustError: the answer is malformed.
    """
    pools = answer.get("pools") if isinstance(answer, dict) else None
    if not isinstance(pools, list) or len(pools) > MAX_TRUSTED_POOLS:
        raise PoolTrustError(f"{where}: the answer has no list of at most {MAX_TRUSTED_POOLS} pools")
    found = [TrustedPool.from_json(item, f"{where} pools[{index}]") for index, item in enumerate(pools)]
    return {pool.name: pool for pool in found}


# --- what a process trusts now ---

@attrs.define
class TrustedPools:
    """The pools a process trusts now, and a version that changes with them. Mutable: the
    watcher replaces the whole set while daemons read it."""

    current: Mapping[str, TrustedPool] = attrs.field(factory=dict)
    version: int = 0

    def replace(self, pools: Mapping[str, TrustedPool]) -> None:
        """Trust exactly ``pools`` from now on."""
        if dict(pools) != dict(self.current):
            self.current = dict(pools)
            self.version += 1

    def get(self, name: str) -> TrustedPool | None:
        """Trusted pool ``name``, or None."""
        return self.current.get(name)

    def by_collector(self, address: str) -> TrustedPool | None:
        """The trusted pool whose collector is ``address`` (same host and port), or None."""
        return next((pool for pool in self.current.values() if pool.serves(address)), None)

    def by_negotiator(self, identity: str) -> TrustedPool | None:
        """The trusted pool whose negotiator uses ``identity`` here, or None."""
        return next((pool for pool in self.current.values()
                     if pool.peer_negotiator and pool.peer_negotiator == identity), None)

    def ca_pems(self) -> tuple[str, ...]:
        """Every trusted pool's CA, PEM, in name order."""
        return tuple(self.current[name].ca_pem for name in sorted(self.current))


#: What every daemon of this process consults; its :class:`TrustWatcher` keeps it current.
PROCESS_TRUSTED_POOLS = TrustedPools()

PoolReader = Callable[[], Deferred]


class TrustWatcher(RefreshingService):
    """Re-reads the trusted pools every ``interval`` seconds into ``holder`` (``read``
    fires with a dict by name); a failure is logged and the pools already trusted stay."""

    def __init__(self, holder: TrustedPools, clock, interval: float, read: PoolReader, source: str) -> None:
        self.holder = holder
        super().__init__(clock, interval, read, holder.replace, "trusted pools", source)


def trust_watcher_from_config(config, clock, interval: float, fetch: PoolReader | None = None,
                              holder: TrustedPools = PROCESS_TRUSTED_POOLS) -> TrustWatcher:
    """The watcher of a daemon: ``fetch`` (a joined host's daemons ask their collector),
    else this host's ``POOL_TRUST_DIR`` read in a worker thread, every ``interval``."""
    if fetch is not None:
        return TrustWatcher(holder, clock, interval, fetch, "the collector")
    directory = trust_dir(config)
    return TrustWatcher(holder, clock, interval,
                        lambda: threads.deferToThreadPool(clock, clock.getThreadPool(), read_trusted_pools, directory),
                        directory)
