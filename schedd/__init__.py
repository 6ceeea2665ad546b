"""The schedd: the durable job queue in SQLite, the submit description language,
the job state machine and policy expressions, the user job event log, history,
claiming matched slots and flocking to other pools.
"""
