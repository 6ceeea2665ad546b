"""The collector's join route: a host holding a bootstrap token (scope JOIN) asks for
its identity once, and gets a daemon token for ``startd@host`` or ``schedd@host`` and,
when the pool has a certificate authority, a host certificate for its names and addresses.
The answer carries what the host then needs to check others: the pool's public key
(tokens are verified with it) and the CA certificate."""

from __future__ import annotations

from twisted.internet import threads

from daemoncore.security import issue_token
from daemoncore.security.host_identity import bound_host
from daemoncore.security.joining import JoinError, JoinLedger
from daemoncore.security.revocation import add_revocation, rule_for_token_id
from daemoncore.security.signing_key import SigningKey, is_shared_secret, public_key_pem
from daemoncore.security.tls import Authority, issue_host_certificate
from daemoncore.security.tls_errors import CertificateError
from daemoncore.wire import collector_routes as api
from daemoncore.wire.errors import BadRequest, Forbidden
from daemoncore.wire.request_body import reject_unknown, take, take_list_of
from daemoncore.wire.server import ApiRequest, JsonReply

MAX_ADDRESSES = 16


class JoinRoutes:
    """Answers joins with tokens signed by ``key`` for pool ``pool``, and certificates
    from ``authority`` when there is one. Each join token is admitted once. A collector
    without an Ed25519 signing key (on a host that joined, or an older pool's shared
    secret) refuses joins, saying why."""

    def __init__(self, key: SigningKey | None, pool: str, clock, authority: Authority | None = None,
                 revocation_path: str | None = None) -> None:
        self._revocation_path = revocation_path
        self._key = key
        self._pool = pool
        self._clock = clock
        self._authority = authority
        self.ledger = JoinLedger()

    def handlers(self) -> dict:
        """The route table for ``ApiResource``."""
        return {api.JOIN: self.join, api.JOIN_CA: self.authority, api.LEAVE: self.leave}

    def authority(self, _request: ApiRequest) -> JsonReply:
        """The pool CA certificate, to anyone: a joining host checks it against its join string."""
        return JsonReply({"ca": self._authority.certificate_pem().decode() if self._authority else None})

    def leave(self, request: ApiRequest):
        """Revoke the calling host's own token (``roost pool leave``): its id goes into the
        pool's revocation file, written in a worker thread."""
        identity = request.identity
        if bound_host(identity) is None:
            raise Forbidden(f"{identity.name} is not a host's own identity: only a host that joined can leave; "
                            f"revoke other tokens with `roost token revoke`")
        if not self._revocation_path:
            raise Forbidden("this collector keeps no revocation file, so it cannot revoke tokens")
        rule = rule_for_token_id(identity.token_id)
        writing = threads.deferToThreadPool(self._clock, self._clock.getThreadPool(), add_revocation,
                                            self._revocation_path, rule, f"{identity.name} left the pool")
        return writing.addCallback(lambda _: JsonReply({"revoked": identity.token_id, "identity": identity.name}))

    def join(self, request: ApiRequest) -> JsonReply:
        """Give the asking host its identity: a daemon token and, with a CA, a host certificate."""
        self._check_can_join()
        body = request.json()
        reject_unknown(body, {"role", "host", "addresses"})
        role = take(body, "role", str)
        host = take(body, "host", str)
        addresses = take_list_of(body, "addresses", str, [])
        if len(addresses) > MAX_ADDRESSES:
            raise BadRequest(f"$.addresses: {len(addresses)} addresses is more than {MAX_ADDRESSES}")
        certificate = self._certificate(host, addresses)
        try:
            identity = self.ledger.admit(request.identity, role, host, self._clock.seconds())
        except JoinError as exc:
            raise Forbidden(str(exc)) from None
        token = issue_token(self._key, identity, ["DAEMON"], issuer=self._pool, now=self._clock.seconds())
        return JsonReply({"identity": identity, "token": token, "pool": self._pool,
                          "public_key": public_key_pem(self._key), **certificate})

    def _check_can_join(self) -> None:
        if self._key is None:
            raise Forbidden("this collector does not hold the pool's signing key, so it cannot give hosts "
                            "identities: join through the central manager's collector")
        if is_shared_secret(self._key):
            raise Forbidden("this pool's signing key is an old shared secret (HS256), which every host would need "
                            "to check tokens: on the central manager, move the key aside and make an Ed25519 one "
                            "(`roost pool up` makes it), then issue tokens again")

    def _certificate(self, host: str, addresses: list[str]) -> dict:
        if self._authority is None:
            return {"certificate": None, "key": None, "ca": None}
        try:
            cert_pem, key_pem = issue_host_certificate(self._authority, [host], addresses)
        except CertificateError as exc:
            raise BadRequest(f"$.host or $.addresses: {exc}") from None
        return {"certificate": cert_pem.decode(), "key": key_pem.decode(),
                "ca": self._authority.certificate_pem().decode()}
