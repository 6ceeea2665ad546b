"""The negotiator's error classes, each named for the failure it reports."""

from __future__ import annotations


class NegotiatorError(ValueError):
    """Something the negotiator was given is wrong; the message says what and where."""


class SettingsError(NegotiatorError):
    """A negotiator configuration value is malformed."""


class AccountantError(NegotiatorError):
    """A priority factor, user name or usage value given to the accountant is bad."""
