"""The startd's routes: claiming a slot with the ClaimId the negotiator handed out,
starting a job on the claim, vacating and releasing it, and draining the machine. The
ClaimId travels in the body, never in the path, so it stays out of access logs."""

from __future__ import annotations

from daemoncore.wire.route import Route

# body: {"claim_id": text, "job_ad": ad, "schedd_address": "<host:port>"}
# answer: {"claim_id": text (the dynamic slot's claim), "slot_name": text, "slot_ad": ad}
CLAIM = Route("claim", "POST", "/v1/claims", level="DAEMON")
# body: {"claim_id": text, "job_id": "c.p", "job_ad": ad, "transfer_key": text,
#        "schedd_address": "<host:port>"}
# answer: {"started": true}; the starter pulls the input from the schedd's JOB_INPUT,
# runs the job and reports through JOB_UPDATE and JOB_OUTPUT. The same body may come back
# inside the answer to the last job's exit report instead; a (job_id, transfer_key) already
# started on the claim is answered {"started": true} again and not started twice.
ACTIVATE = Route("activate", "POST", "/v1/claims/activate", level="DAEMON")
# body: {"claim_id": text, "reason": text, "graceful": bool, "reported": bool (default true;
# false: the run's end is not reported, its shadow has ended)}; answer: {"vacating": true}
VACATE = Route("vacate", "POST", "/v1/claims/vacate", level="DAEMON")
# body: {"claim_id": text}; answer: {"released": true}
RELEASE = Route("release", "POST", "/v1/claims/release", level="DAEMON")
# The schedd's keep-alive for its claims at this startd: each known claim's lease starts over.
# body: {"claim_ids": [text, ...]}; answer: {"alive": n, "unknown": [index, ...]} (positions
# in claim_ids of claims this startd no longer holds, so ClaimIds never travel back)
ALIVE = Route("alive", "POST", "/v1/claims/alive", level="DAEMON")
# A restarted schedd asks for its running job again: the run on the claim reports to
# the new address with the new transfer key from now on.
# body: {"claim_id": text, "job_id": "c.p", "transfer_key": text, "schedd_address": "<host:port>"}
# answer: {"reconnected": true, "slot_name": text}; 404 when no job of that id runs on the claim
RECONNECT = Route("reconnect", "POST", "/v1/claims/reconnect", level="DAEMON")
# condor_drain: keep new claims away from every slot of this machine; running jobs are
# treated by the schedule (graceful: let them finish, vacating one when its
# MaxJobRetirementTime is over; quick: vacate them; fast: kill them).
# body: {"how": "graceful" | "quick" | "fast", "reason": text}
# answer: {"request_id": text, "slots": n, "retiring": n (slots whose jobs still run)}
DRAIN = Route("drain", "POST", "/v1/drain", level="ADMINISTRATOR")
# condor_drain -cancel: the slots take claims again; jobs still running carry on.
# body: {"request_id": text (optional: cancel only that drain)}; answer: {"cancelled": true};
# 409 when the machine is not draining, or drains under another request id
CANCEL_DRAIN = Route("cancel_drain", "POST", "/v1/drain/cancel", level="ADMINISTRATOR")
