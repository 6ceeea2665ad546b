"""Errors of the startd's logic: discovery, slot layout, claims and the starter."""


class DiscoveryError(ValueError):
    """A discovery knob (``GPU_DISCOVERY``, ``NUM_CPUS``, ``MEMORY``) is wrong or its backend failed."""


class SlotConfigError(ValueError):
    """``SLOT_TYPE_<n>``/``NUM_SLOTS_TYPE_<n>`` describe slots this machine cannot hold."""


class SlotStateError(ValueError):
    """A slot was asked for a state change that its current state and activity do not allow."""


class ClaimError(ValueError):
    """A claim request names an unknown ClaimId or a slot that cannot take it."""


class ClaimRefused(ClaimError):
    """The slot's START is false for the job, or the job asks for more than the slot has."""


class StarterError(ValueError):
    """A job cannot be started: a missing executable or input, bad arguments or environment."""
