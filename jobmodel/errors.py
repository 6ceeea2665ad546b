"""Errors the job queue, state machine, policy and history raise; each message
names the job or attribute and says what was expected."""

from classad import ConstraintError


class ScheddError(Exception):
    """Base class of every error the schedd's logic raises."""


class InvalidTransitionError(ScheddError):
    """The action does not apply to a job in its current state."""


class ProtectedAttributeError(ScheddError):
    """An edit tried to change an attribute only the schedd may set."""


class JobNotFoundError(ScheddError, KeyError):
    """No job in the queue has the given id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class NotOwnerError(ScheddError):
    """A user acted on a job whose Owner is someone else."""


class BadJobAdError(ScheddError, ValueError):
    """A submitted cluster or proc ad is malformed."""


class BadConstraintError(ScheddError, ConstraintError):
    """A policy expression or an edited value does not parse. A query's constraint
    that does not parse raises :class:`classad.ConstraintError`, of which this is a
    kind, so ``except ConstraintError`` catches both."""


class EventLogError(ScheddError, ValueError):
    """A user job event log cannot be written or read; names the file and line."""
