"""Revoked tokens: ClassAd expressions over a token's claims, after HTCondor's
``SEC_TOKEN_REVOCATION_EXPR``; a token for which any of them is true is refused.

The rules come from the ``SEC_TOKEN_REVOCATION_EXPR`` knob and from the pool's
revocation file (``SEC_TOKEN_REVOCATION_FILE``, default ``$(SPOOL)/revoked_tokens``),
one expression a line, which ``roost token revoke`` appends to. The claims a rule sees
are the token's: ``jti`` (its id), ``sub`` (``startd@hostB``), ``iss``, ``iat``, ``exp``
and ``scope``. This module is the pure part; :mod:`daemoncore.security.revocation_watch`
re-reads the file on a timer.
"""

from __future__ import annotations

import os
import re

import attrs

import classad
from daemoncore.security.errors import SecurityError
from daemoncore.security.levels import scope_claim
from daemoncore.security.token_files import replace_file
from daemoncore.security.tokens import Identity, parse_identity

#: A revocation file larger than this is refused (it is re-read every update interval).
MAX_REVOCATION_BYTES = 1024 * 1024
REVOCATION_FILE_NAME = "revoked_tokens"
_TOKEN_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


class RevocationError(SecurityError):
    """A revocation rule or file cannot be used; the message names the line and why."""


@attrs.frozen
class Revocations:
    """The rules in force, each kept with its text and where it came from."""

    rules: tuple[tuple[str, str], ...] = ()  # (where, expression text)
    _predicates: tuple = attrs.field(default=(), repr=False, eq=False)

    @classmethod
    def of(cls, rules: list[tuple[str, str]]) -> Revocations:
        """The revocations of ``rules`` (pairs of where and expression text).

        Raises:
            RevocationError: a rule does not parse; the message names where it was.
        """
        predicates = []
        for where, text in rules:
            try:
                predicates.append(classad.compile_constraint(text))
            except classad.ConstraintError as exc:
                raise RevocationError(f"{where}: revocation rule {text!r} is not an expression: {exc}") from None
        return cls(tuple(rules), tuple(predicates))

    def reason(self, identity: Identity) -> str | None:
        """Why ``identity``'s token is revoked (the rule that matched and where it is), or None."""
        if not self.rules:
            return None
        claims = claims_ad(identity)
        for (where, text), matches in zip(self.rules, self._predicates):
            if matches(claims):
                return f"the token {identity.token_id} of {identity.name} is revoked by {text!r} ({where})"
        return None


def claims_ad(identity: Identity) -> classad.ClassAd:
    """A ClassAd of the token's claims, which revocation rules are evaluated in."""
    claims: dict[str, object] = {"jti": identity.token_id or "", "sub": identity.name,
                                 "iss": identity.issuer or "", "scope": scope_claim(identity.scopes)}
    if identity.issued is not None:
        claims["iat"] = int(identity.issued)
    if identity.expires is not None:
        claims["exp"] = int(identity.expires)
    return classad.ClassAd(claims)


def parse_revocation_text(text: str, source: str) -> list[tuple[str, str]]:
    """The rules of a revocation file's ``text``: one expression a line, blank lines and
    ``#`` comments skipped; each with ``source:line`` as where it came from."""
    rules = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            rules.append((f"{source}:{number}", stripped))
    return rules


def revocations_from(expression: str | None, file_text: str | None, file_path: str) -> Revocations:
    """The revocations of the ``SEC_TOKEN_REVOCATION_EXPR`` knob and the file's text.

    Raises:
        RevocationError: a rule does not parse.
    """
    rules = [("SEC_TOKEN_REVOCATION_EXPR", expression.strip())] if expression and expression.strip() else []
    if file_text:
        rules += parse_revocation_text(file_text, file_path)
    return Revocations.of(rules)


def rule_for_token_id(token_id: str) -> str:
    """The rule revoking the one token with id ``token_id``: ``jti == "..."``.

    Raises:
        RevocationError: not a token id (letters, digits, ``-`` and ``_``).
    """
    if not _TOKEN_ID.fullmatch(token_id):
        raise RevocationError(f"{token_id!r} is not a token id (a token's jti claim: letters, digits, - and _)")
    return f'jti == "{token_id}"'


def rule_for_identity(name: str) -> str:
    """The rule revoking every token of identity ``name``: ``sub == "startd@hostB"``.

    Raises:
        RevocationError: not of the form user@domain.
    """
    try:
        user, domain = parse_identity(name)
    except ValueError as exc:
        raise RevocationError(str(exc)) from None
    return f"sub == {classad.quote(f'{user}@{domain}')}"


def read_revocation_file(path: str) -> str | None:
    """The file's text, or None when there is none (no token was revoked yet).

    Raises:
        RevocationError: unreadable, or over :data:`MAX_REVOCATION_BYTES`.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_REVOCATION_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RevocationError(f"cannot read the revocation file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_REVOCATION_BYTES:
        raise RevocationError(f"the revocation file {path} is over {MAX_REVOCATION_BYTES} bytes")
    return data.decode("utf-8", "replace")


def add_revocation(path: str, rule: str, comment: str = "") -> bool:
    """Append ``rule`` to the revocation file (made 0644 in a 0700 parent when new), atomically,
    unless it is already there; whether it was added.

    Raises:
        RevocationError: the rule does not parse, or the file cannot be read or written.
    """
    Revocations.of([("the new rule", rule)])
    text = read_revocation_file(path) or ""
    if rule in (existing for _, existing in parse_revocation_text(text, path)):
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    text += (f"# {comment}\n" if comment else "") + rule + "\n"
    try:
        replace_file(path, text, 0o644)
    except OSError as exc:
        raise RevocationError(f"cannot write the revocation file {path}: {exc.strerror or exc}") from None
    return True


def revocation_file(config) -> str:
    """Where the pool keeps its revocation file: ``SEC_TOKEN_REVOCATION_FILE``, else ``$(SPOOL)/revoked_tokens``."""
    return config.param("SEC_TOKEN_REVOCATION_FILE") or os.path.join(config.param("SPOOL", "."),
                                                                     REVOCATION_FILE_NAME)
