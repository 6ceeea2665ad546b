"""Errors of the collector's pure logic."""


class AdRejected(ValueError):
    """An advertised ad lacks what the collector needs (a string ``Name``, a usable lifetime)."""


class AdNotOwned(ValueError):
    """A host-bound identity tried to change an ad of another host, or of a type not its own."""
