"""The collector's routes, shared by the collector that serves them and every
client (daemons advertising themselves, bindings and the CLI querying)."""

from __future__ import annotations

from daemoncore.wire.route import Route

# body: {"ads": [ad, ...], "private": false}; answer: {"updated": n}
ADVERTISE = Route("advertise", "POST", "/v1/ads/{ad_type}", level="DAEMON")
# body: {"names": [...]} or {"constraint": "..."}; answer: {"invalidated": n}
INVALIDATE = Route("invalidate", "POST", "/v1/ads/{ad_type}/invalidate", level="DAEMON")
# body: {"constraint": "...", "projection": [...], "limit": n, "private": false}; answer: NDJSON ads
QUERY = Route("query", "POST", "/v1/ads/{ad_type}/query", level="READ", streams=True)

MAX_ADS_PER_UPDATE = 20_000

# body: {"role": "execute" | "submit", "host": name, "addresses": [ip, ...]}; only a JOIN
# token (from `roost pool join-token`), once; answer: {"identity": "startd@host",
# "token": daemon token, "certificate": PEM or null, "key": PEM or null, "ca": PEM or null}
JOIN = Route("join", "POST", "/v1/join", level="JOIN")
# answer: {"ca": PEM or null}; anyone: a joining host compares it with its join string's
# fingerprint before it sends its join token
JOIN_CA = Route("join_ca", "GET", "/v1/join/ca", level=None)
# no body; a host-bound DAEMON identity (startd@hostB) revokes its own token; answer: {"revoked": jti}
LEAVE = Route("leave", "POST", "/v1/join/leave", level="DAEMON")
# answer: {"text": the pool's revocation file, or null}; the daemons of hosts that joined
# fetch it every UPDATE_INTERVAL (see daemoncore.security.revocation_watch)
REVOCATIONS = Route("revocations", "GET", "/v1/revocations", level="DAEMON")
# answer: {"pools": [{"name", "collector", "ca_pem", "token", "peer_negotiator"}]}: the pools
# this pool trusts for flocking (the central manager's POOL_TRUST_DIR); the daemons of hosts
# that joined fetch it every UPDATE_INTERVAL (see daemoncore.security.pool_trust)
TRUST = Route("trust", "GET", "/v1/trust", level="DAEMON")
