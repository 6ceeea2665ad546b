"""Errors of the collector's pure logic."""


class AdRejected(ValueError):
    """An advertised ad lacks what the collector needs (a string ``Name``, a usable lifetime)."""

