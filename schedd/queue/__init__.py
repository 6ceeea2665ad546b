"""The durable job queue: clusters stored as common attributes plus each proc's
differences in SQLite, whole-cluster submits (a large one stored a chunk per
transaction and hidden until whole), streaming queries, edits and state
transitions, and the move of finished jobs to history."""

from schedd.queue.jobqueue import PROTECTED_ATTRIBUTES, QUEUE_FILE, ActResult, JobAction, JobQueue, is_attribute_name
from schedd.queue.selection import JobSelection

__all__ = ["JobQueue", "JobAction", "ActResult", "JobSelection", "QUEUE_FILE", "PROTECTED_ATTRIBUTES",
           "is_attribute_name"]
