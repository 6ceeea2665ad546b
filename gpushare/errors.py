"""The error a malformed GPU request raises."""

from __future__ import annotations


class GpuRequestError(ValueError):
    """A job's GPU request is malformed or out of range; the message names the attribute."""
