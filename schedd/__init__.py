"""The schedd: the durable job queue in SQLite, the submit description language,
the job state machine and policy expressions, the user job event log, history, and
claiming matched slots (the shadow runs inside it), job factories (late
materialisation), and flocking: advertising submitters to other pools' collectors
and claiming their slots.
"""
