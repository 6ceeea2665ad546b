"""The resource request a schedd sends the negotiator, one per autocluster, and its
JSON line: ``{"request_id": text, "count": n, "ad": job ad, "job_ids": ["c.p", ...]}``
(the job ids optional, in the order the schedd would run them). Both ends use this
module, so the shape is written down once."""

from __future__ import annotations

from collections.abc import Mapping

import attrs
from attrs import frozen

from classad import ClassAd
from daemoncore.wire.adcodec import ad_from_json, ad_to_json
from daemoncore.wire.errors import BadRequest


@frozen
class ResourceRequest:
    """What a schedd asks the negotiator for: ``count`` slots for jobs like ``ad``."""

    request_id: str
    submitter: str
    schedd_address: str
    count: int = attrs.field(validator=attrs.validators.ge(0))
    ad: ClassAd = attrs.field(eq=False)
    job_ids: tuple[str, ...] = ()


def request_to_json(request: ResourceRequest) -> dict:
    """The request as one line of a RESOURCE_REQUESTS answer. The job ids stay with the
    schedd (it remembers them by request id), so they are not sent."""
    return {"request_id": request.request_id, "count": request.count, "ad": ad_to_json(request.ad)}


def request_from_json(line: object, submitter: str, schedd_address: str, where: str) -> ResourceRequest:
    """The request in one RESOURCE_REQUESTS line, for ``submitter`` at ``schedd_address``.

    Raises:
        BadRequest: the line is not a request object; the message starts with ``where``.
    """
    if not isinstance(line, Mapping):
        raise BadRequest(f"{where}: expected a JSON object, got {type(line).__name__}")
    request_id, count, job_ids = line.get("request_id"), line.get("count"), line.get("job_ids") or []
    if not isinstance(request_id, str) or not request_id:
        raise BadRequest(f"{where}: request_id must be a non-empty string, got {request_id!r}")
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise BadRequest(f"{where}: count must be a whole number 0 or more, got {count!r}")
    if not isinstance(job_ids, list) or not all(isinstance(j, str) for j in job_ids):
        raise BadRequest(f"{where}: job_ids must be a list of \"cluster.proc\" strings")
    ad = ad_from_json(line.get("ad"), f"{where}: ad")
    return ResourceRequest(request_id, submitter, schedd_address, count, ad, tuple(job_ids))
