"""The job model the schedd and the shadow share: job states and the transitions
between them (``states``), the user job event log's records (``eventlog``), and the
errors the job queue and its state machine raise (``errors``). Pure code below both
daemons, so neither imports the other to know what a job is."""
