"""The negotiator's routes: user priorities for `roost userprio` and the bindings."""

from __future__ import annotations

from daemoncore.wire.route import Route

# answer: {"priorities": [{"Name": "alice@pool", "Priority": real, "PriorityFactor": real,
#          "ResourcesUsed": n, "AccumulatedUsage": seconds, "BeginUsageTime": t,
#          "LastUsageTime": t, "IsAccountingGroup": bool}, ...]}
PRIORITIES = Route("priorities", "GET", "/v1/priorities", level="READ")
# body: {"name": "alice@pool", "factor": real}; answer: {"ok": true}
SET_FACTOR = Route("set_factor", "POST", "/v1/priorities/factor", level="ADMINISTRATOR")
# body: {"name": "alice@pool"}; answer: {"ok": true}
RESET_USAGE = Route("reset_usage", "POST", "/v1/priorities/reset", level="ADMINISTRATOR")
# answer: {"started": true}; asks for a cycle soon (the schedd calls it after submits)
RESCHEDULE = Route("reschedule", "POST", "/v1/reschedule", level="DAEMON")
# query: optional submitter=NAME, job=CLUSTER.PROC; answer: the last cycle's waiting requests with
# why each waits, its submitters and groups (negotiator/last_cycle.py to_wire); started null before any
LAST_CYCLE = Route("last_cycle", "GET", "/v1/negotiator/last-cycle", level="READ")
