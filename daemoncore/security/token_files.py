"""Where clients find their token: ``ROOST_TOKEN``, else the files of the token directory.

``ROOST_TOKEN`` holds either the token text or the path of a file holding it. A token
file holds one token per line; blank lines and ``#`` comments are skipped. The token
directory defaults to ``~/.config/roost/tokens.d/`` (config knob ``SEC_TOKEN_DIRECTORY``).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Mapping

import attrs

from daemoncore.security.errors import TokenError
from daemoncore.security.tokens import read_unverified

TOKEN_ENV = "ROOST_TOKEN"
_JWT_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")


@attrs.frozen
class FoundToken:
    """A token's text and where it was found (a file path, or ``ROOST_TOKEN``)."""

    text: str = attrs.field(repr=False)
    source: str


def default_token_dir(env: Mapping[str, str]) -> str:
    """``~/.config/roost/tokens.d`` for the home directory in ``env``."""
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".config", "roost", "tokens.d")


def find_token(env: Mapping[str, str] | None = None, token_dir: str | None = None, *,
               issuer: str | None = None) -> FoundToken | None:
    """The token a client should send, or None when it has none.

    ``ROOST_TOKEN`` wins; otherwise the first token in the token directory's files
    (in name order) whose issuer is ``issuer`` (any issuer when None).

    Raises:
        TokenError: ``ROOST_TOKEN`` names a file that is missing or holds no token.
    """
    env = os.environ if env is None else env
    value = env.get(TOKEN_ENV, "").strip()
    if value:
        return _from_env(value)
    for found in list_tokens(token_dir or default_token_dir(env)):
        if issuer is None or _issuer(found.text) == issuer:
            return found
    return None


def list_tokens(token_dir: str) -> list[FoundToken]:
    """Every token in the files of ``token_dir`` (hidden files and unreadable ones skipped)."""
    try:
        names = sorted(os.listdir(token_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    found: list[FoundToken] = []
    for name in names:
        path = os.path.join(token_dir, name)
        if name.startswith(".") or name.endswith("~") or not os.path.isfile(path):
            continue
        try:
            found += [FoundToken(text, path) for text in _tokens_in(_read(path))]
        except OSError:
            continue
    return found


def write_token(path: str, token: str) -> None:
    """Write ``token`` to ``path`` with mode 0600, atomically; parents get mode 0700.

    Raises:
        TokenError: the file cannot be written.
    """
    try:
        replace_file(path, token.strip() + "\n", 0o600)
    except OSError as err:
        raise TokenError(f"cannot write token file {path}: {err.strerror or err}") from None


def replace_file(path: str, text: str, mode: int) -> None:
    """Write ``text`` to ``path`` with ``mode`` under a temporary name and rename it into
    place (a reader sees the old file or the new one); missing parents get mode 0700.

    Raises:
        OSError: the file cannot be written.
    """
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, mode=0o700, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=directory, prefix=".roost-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), mode)
            handle.write(text)
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(temp)
        raise


def read_token_file(path: str) -> str:
    """The first token in the file at ``path``.

    Raises:
        TokenError: the file is missing, unreadable or holds no token.
    """
    try:
        tokens = _tokens_in(_read(path))
    except OSError as err:
        raise TokenError(f"cannot read the token file {path}: {err.strerror or err}") from None
    if not tokens:
        raise TokenError(f"the token file {path} holds no token")
    return tokens[0]


def _from_env(value: str) -> FoundToken:
    if _JWT_SHAPE.fullmatch(value):
        return FoundToken(value, TOKEN_ENV)
    try:
        tokens = _tokens_in(_read(value))
    except FileNotFoundError:
        raise TokenError(f"{TOKEN_ENV} names {value}, which does not exist: "
                         f"set it to a token or to a token file") from None
    except OSError as err:
        raise TokenError(f"cannot read the token file {value} named by {TOKEN_ENV}: {err.strerror}") from None
    if not tokens:
        raise TokenError(f"the token file {value} named by {TOKEN_ENV} holds no token")
    return FoundToken(tokens[0], value)


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _tokens_in(text: str) -> list[str]:
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def _issuer(token: str) -> str | None:
    try:
        return read_unverified(token).issuer
    except TokenError:
        return None
