"""Finding the pool a client talks to: the ``pool=`` argument, else ``COLLECTOR_HOST``,
else the personal pool's address file that ``roost pool up`` writes; and the token
to send it."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from attrs import frozen

from daemoncore.config import Config
from daemoncore.security import find_token
from daemoncore.wire.address import DEFAULT_COLLECTOR_PORT, parse_address

NO_POOL = "no pool found: start one with `roost pool up` or set COLLECTOR_HOST"


class NoPoolFound(Exception):
    """No pool was named, configured or started here."""


@frozen
class Pool:
    """Where a pool's collector answers, how that was learnt, and what else is known of it."""

    collector: str
    source: str
    token_file: str | None = None
    dir: str | None = None
    master: str | None = None
    master_pid: int | None = None
    ca_file: str | None = None


def default_pool_dir(env: Mapping[str, str] | None = None) -> str:
    """``$XDG_DATA_HOME/roost/pool``, else ``~/.local/share/roost/pool``."""
    env = os.environ if env is None else env
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return os.path.join(data, "roost", "pool")


def collector_address(text: str) -> str:
    """``host:port`` for a collector written ``host``, ``host:port`` or ``<host:port>``.

    Raises:
        ValueError: not an address.
    """
    return str(parse_address(text, default_port=DEFAULT_COLLECTOR_PORT))


def find_pool(pool: str | None = None, config: Config | None = None) -> Pool:
    """The pool to talk to.

    Raises:
        NoPoolFound: no ``pool``, no ``COLLECTOR_HOST`` and no personal pool's address file.
        ValueError: ``pool`` or ``COLLECTOR_HOST`` is not an address, or the address file is corrupt.
        ConfigError: the configuration has an error.
    """
    if pool:
        return Pool(collector_address(pool), "the pool argument")
    config = Config.load() if config is None else config
    configured = config.lookup("COLLECTOR_HOST")
    if configured is not None and configured.value.strip():
        try:
            return Pool(collector_address(configured.value), f"COLLECTOR_HOST ({configured.origin.describe()})")
        except ValueError as exc:
            raise ValueError(f"COLLECTOR_HOST ({configured.origin.describe()}): {exc}") from None
    path = config.param("POOL_ADDRESS_FILE", "")
    facts = read_pool_file(path) if path else None
    if not facts or not facts.get("collector"):
        raise NoPoolFound(NO_POOL)
    found = pool_from_facts(facts, path)
    if found.ca_file:  # the pool serves TLS: only then load the TLS client code (and Twisted)
        from daemoncore.security.tls_client import PoolTrust, client_trust, use_client_trust

        if client_trust() is None:  # the configuration names no CA
            use_client_trust(PoolTrust.from_file(found.ca_file))
    return found


def pool_from_facts(facts: dict, path: str) -> Pool:
    """The ``Pool`` described by an address file's contents ``facts`` read from ``path``.

    Raises:
        ValueError: the file names no collector address.
    """
    try:
        collector = collector_address(str(facts["collector"]))
    except (KeyError, ValueError) as exc:
        raise ValueError(f"pool address file {path} names no collector address ({exc}): "
                         f"run `roost pool up` again") from None
    return Pool(collector, f"pool address file {path}", token_file=facts.get("token_file"),
                dir=facts.get("dir"), master=facts.get("master"), master_pid=facts.get("master_pid"),
                ca_file=facts.get("ca_file"))


def read_pool_file(path: str) -> dict | None:
    """The contents of a pool address file, or None when there is none.

    Raises:
        ValueError: the file is not a JSON object.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        facts = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"pool address file {path} is not JSON ({exc}): remove it or run `roost pool up`") from None
    if not isinstance(facts, dict):
        raise ValueError(f"pool address file {path} does not hold a JSON object: remove it or run `roost pool up`")
    return facts


def pool_token(pool: Pool, config: Config | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """The token to send ``pool``: ``ROOST_TOKEN``, else the personal pool's own token,
    else the first one in the token directory.

    Raises:
        TokenError: ``ROOST_TOKEN`` names a missing or empty file.
    """
    env = os.environ if env is None else env
    if env.get("ROOST_TOKEN", "").strip():
        found = find_token(env)
        return found.text if found else None
    if pool.token_file:
        try:
            with open(pool.token_file, encoding="utf-8") as handle:
                lines = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
            if lines:
                return lines[0]
        except OSError:
            pass
    config = Config.load(env=env) if config is None else config
    found = find_token(env, config.param("SEC_TOKEN_DIRECTORY") or None)
    return found.text if found else None
