"""One description of an HTTP route, shared by the server that serves it and the
clients that call it: method, path template, authorization level, streaming or not."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from attrs import field, frozen

from daemoncore.security import AuthorizationLevel

AUTHORIZATION_LEVELS = tuple(level.name for level in AuthorizationLevel)

#: The header each capability travels in. ``transfer_key``: the per-job key a schedd's
#: shadow gives the starter for the length of a claim (HTCondor's rule that the shadow
#: grants the starter access), so the starter of a job flocked to another pool, whose
#: token this pool cannot verify, may still fetch input and send output and updates.
CAPABILITY_HEADERS = {"transfer_key": "X-Roost-Transfer-Key"}

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def _check_template(_instance, _attribute, template: str) -> None:
    if not template.startswith("/"):
        raise ValueError(f"route template {template!r} must start with '/'")


def _check_capability(_instance, _attribute, capability: str | None) -> None:
    if capability is not None and capability not in CAPABILITY_HEADERS:
        raise ValueError(f"capability {capability!r} is not one of {tuple(CAPABILITY_HEADERS)}")


def _check_level(_instance, _attribute, level: str | None) -> None:
    if level is not None and level not in AUTHORIZATION_LEVELS:
        raise ValueError(f"authorization level {level!r} is not one of {AUTHORIZATION_LEVELS}")


@frozen
class Route:
    """An HTTP route: ``method`` and ``template`` such as ``/v1/ads/{ad_type}``.

    ``level`` names the authorization level a caller needs (``None`` means anyone);
    ``streams`` says the answer is NDJSON, one object per line; ``capability`` names a
    capability (see ``CAPABILITY_HEADERS``) that admits a caller whose token is another
    pool's, leaving the handler to check it: nothing else about the level changes.
    """

    name: str
    method: str
    template: str = field(validator=_check_template)
    level: str | None = field(default="READ", validator=_check_level)
    streams: bool = False
    capability: str | None = field(default=None, validator=_check_capability)
    _pattern: re.Pattern = field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        parts = _PLACEHOLDER.split(self.template)
        regex = "".join(
            f"(?P<{part}>[^/]+)" if index % 2 else re.escape(part)
            for index, part in enumerate(parts)
        )
        object.__setattr__(self, "_pattern", re.compile(f"^{regex}$"))

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The names of the path's placeholders, in order."""
        return tuple(_PLACEHOLDER.findall(self.template))

    @property
    def capability_header(self) -> str | None:
        """The header the route's capability travels in, or None."""
        return CAPABILITY_HEADERS.get(self.capability) if self.capability is not None else None

    def path(self, **params: str) -> str:
        """The concrete path with ``params`` filled in and quoted.

        Raises:
            KeyError: a placeholder has no value in ``params``.
        """
        return _PLACEHOLDER.sub(lambda m: quote(str(params[m.group(1)]), safe=""), self.template)

    def match(self, path: str) -> dict[str, str] | None:
        """The placeholder values if ``path`` is this route's, else ``None``."""
        found = self._pattern.match(path)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}
