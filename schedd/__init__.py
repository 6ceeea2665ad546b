"""The schedd: the durable job queue in SQLite, the submit description language,
the job state machine and policy expressions, the user job event log, history, and
claiming matched slots (the shadow runs inside it). Flocking to other pools is not
built yet.
"""
