"""The schedd's routes, shared by the schedd and its clients (bindings, CLI, the
negotiator, and startds reporting on the jobs they run). Ads travel in HTCondor's
JSON form (:mod:`daemoncore.wire.adcodec`); job ids are ``"cluster.proc"`` strings."""

from __future__ import annotations

from daemoncore.wire.route import CAPABILITY_HEADERS, Route

# body: {"cluster_ad": ad, "proc_ads": [ad, ...]}  (the shape Submit.clusters() gives)
#    or {"description": text, "itemdata": [ {...}, ...] | null, "count": n, "iwd": path}
# answer: {"cluster": id, "first_proc": 0, "num_procs": n, "cluster_ad": ad}
SUBMIT = Route("submit", "POST", "/v1/jobs", level="WRITE")
# body: {"constraint": text, "projection": [...], "limit": n}; answer: NDJSON job ads
QUERY = Route("query_jobs", "POST", "/v1/jobs/query", level="READ", streams=True)
# body: {"action": "Hold"|"Release"|"Remove"|"Vacate"|..., "ids": ["1.0", "2"] | null,
#        "constraint": text | null, "reason": text | null}
# answer: {"changed": n, "refused": [{"id": "1.0", "reason": "..."}]}
ACT = Route("act", "POST", "/v1/jobs/act", level="WRITE")
# body: {"ids": [...] | null, "constraint": text | null, "attr": name, "value": expression text}
# answer: {"changed": n}
EDIT = Route("edit", "POST", "/v1/jobs/edit", level="WRITE")
# body: {"constraint": text, "projection": [...], "match": n, "since": text | null}
# answer: NDJSON ads, newest first
HISTORY = Route("history", "POST", "/v1/history/query", level="READ", streams=True)

# A job's events from its own event log (UserLog), oldest first, each as written there (a
# text-form event with its "..." line, or a JSON line); at most the last 1000 from the last MiB.
# answer: {"job": "c.p", "events": [text, ...], "problem": text (only when the log cannot be read)}
JOB_EVENTS = Route("job_events", "GET", "/v1/jobs/{job_id}/events", level="READ")

# -spool: POST the input tar of a job held for spooling (code 16); answer {"job": "c.p", "files": n}
SPOOL_INPUT = Route("spool_input", "POST", "/v1/jobs/{job_id}/spool", level="WRITE")
# condor_transfer_data: GET a completed spooled job's outputs; answer is a tar (application/x-tar)
SPOOL_OUTPUT = Route("spool_output", "GET", "/v1/jobs/{job_id}/spool", level="WRITE")

# The negotiator asks for one submitter's resource requests (one per autocluster).
# body: {"submitter": "alice@pool"}
# answer: NDJSON lines of daemoncore.wire.resource_request (one per autocluster)
RESOURCE_REQUESTS = Route("resource_requests", "POST", "/v1/negotiate/requests",
                          level="DAEMON", streams=True)
# The negotiator hands over the matches of one cycle.
# body: {"matches": [{"request_id": text, "job_id": "c.p" | null, "slot_name": text,
#                     "startd_address": "<host:port>", "claim_id": text, "slot_ad": ad}]}
# answer: {"accepted": n}
MATCHES = Route("matches", "POST", "/v1/negotiate/matches", level="DAEMON")

# A starter reporting on its job, authorised by the job's transfer key (header
# X-Roost-Transfer-Key) on top of a DAEMON token; the starter of a job flocked to
# another pool holds that pool's token, which the key stands in for (capability).
# GET input: answer is the input tar stream (transfer.send_input)
JOB_INPUT = Route("job_input", "GET", "/v1/jobs/{job_id}/input", level="DAEMON", capability="transfer_key")
# POST output: body is the output tar stream (transfer.send_output)
JOB_OUTPUT = Route("job_output", "POST", "/v1/jobs/{job_id}/output", level="DAEMON", capability="transfer_key")
# POST checkpoint: body is the checkpoint tar stream (transfer.checkpoint.send_checkpoint)
JOB_CHECKPOINT = Route("job_checkpoint", "POST", "/v1/jobs/{job_id}/checkpoint", level="DAEMON",
                       capability="transfer_key")
# POST update: {"event": "execute"|"usage"|"exit"|"evicted"|"hold", "attrs": {...}}
#   exit attrs: ExitCode, ExitBySignal, ExitSignal, RemoteUserCpu, RemoteSysCpu,
#               ImageSize, ResidentSetSize, MemoryUsage, RemoteWallClockTime
#   hold attrs: HoldReason, HoldReasonCode, HoldReasonSubCode
#   checkpoint attrs: CheckpointNumber, LastCheckpointTime, NewlyCommittedTime, usage
#   answer: {"job_status": N, ...}; an exit report with "takes_activation": true may be
#   answered with "activate": the claim's next job as an ACTIVATE body (schedd.riding_activations)
JOB_UPDATE = Route("job_update", "POST", "/v1/jobs/{job_id}/update", level="DAEMON", capability="transfer_key")

TRANSFER_KEY_HEADER = CAPABILITY_HEADERS["transfer_key"]
