"""The submit-side agent of one running job, living inside the schedd: file
transfer (sandbox, URLs, S3), watching the job, recording its exit, and putting it
back in the queue to restart elsewhere when its machine is lost.
"""

from shadow.shadow import DEFAULT_LEASE_SECONDS, Ending, Shadow, ShadowHost

__all__ = ["Shadow", "ShadowHost", "Ending", "DEFAULT_LEASE_SECONDS"]
