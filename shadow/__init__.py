"""The submit-side agent of one running job, living inside the schedd: moving the
job's files (through the shared ``transfer`` package), watching the job, recording its exit, and putting it
back in the queue to restart elsewhere when its machine is lost.
"""

from shadow.shadow import DEFAULT_LEASE_SECONDS, Ending, Shadow, ShadowHost

__all__ = ["Shadow", "ShadowHost", "Ending", "DEFAULT_LEASE_SECONDS"]
