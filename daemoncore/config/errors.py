"""Errors raised while reading or looking up configuration."""

from __future__ import annotations


class ConfigError(ValueError):
    """A configuration file or value is wrong; the message names where and what was expected."""

    def __init__(self, message: str, source: str | None = None, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = message
        where = _where(source, line)
        super().__init__(f"{where}: {message}" if where else message)


def _where(source: str | None, line: int | None) -> str:
    if source is None:
        return ""
    return f"{source}, line {line}" if line is not None else source
