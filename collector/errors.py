"""Errors of the collector's pure logic."""


class AdRejected(ValueError):
    """An advertised ad lacks what the collector needs (a string ``Name``, a usable lifetime)."""


class ConstraintError(ValueError):
    """A query or invalidation constraint is not a valid ClassAd expression."""
