"""The startd's calls to the schedd about one running job: fetch its input tar, post
its updates and its output tar. Each call carries the startd's DAEMON token and the
job's transfer key, which only the schedd and the claimed startd know, in the
``X-Roost-Transfer-Key`` header: never in the URL, which access logs record."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import BinaryIO

import treq
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectError, ConnectionClosed, TimeoutError
from twisted.web.client import FileBodyProducer, ResponseFailed

from daemoncore.wire.address import parse_address
from daemoncore.wire.async_client import DIRECT_HTTP, AsyncClient
from daemoncore.wire.errors import Unreachable
from daemoncore.wire.route import Route
from daemoncore.wire.schedd_routes import JOB_CHECKPOINT, JOB_INPUT, JOB_OUTPUT, JOB_UPDATE, TRANSFER_KEY_HEADER

DEFAULT_TIMEOUT = 60.0
_NETWORK_ERRORS = (ConnectError, ConnectionClosed, TimeoutError, ResponseFailed)


class ScheddLink:
    """Talks to the schedd at ``address`` about job ``job_id``; ``token`` gives a DAEMON
    token for each call; ``http`` is the daemons' direct HTTP layer, treq, or a
    stand-in such as ``StubTreq``."""

    def __init__(self, address: str, job_id: str, transfer_key: str, token: Callable[[], str], *,
                 http=DIRECT_HTTP, timeout: float = DEFAULT_TIMEOUT,
                 heard: Callable[[], None] | None = None) -> None:
        self.address = parse_address(address)
        self._heard = heard  # told after each call the schedd answered: the link is alive
        self.job_id = job_id
        self._token = token  # a fresh token per call, since a job may outlive any one token
        self._key = transfer_key
        self._http = http
        self._timeout = timeout

    def fetch_input(self, into: BinaryIO) -> Deferred:
        """Write the job's input tar stream to ``into``; fire with the byte count.

        Fails with ``RemoteError`` (the schedd refused: 409 means it held the job)
        or ``Unreachable``.
        """
        return Deferred.fromCoroutine(self._fetch(into))

    def update(self, event: str, attrs: dict, takes_activation: bool = False) -> Deferred:
        """Post one report (``execute``, ``usage``, ``exit``, ``evicted``, ``hold``); fire with the answer.
        ``takes_activation``: the answer to an exit report may carry the claim's next activation."""
        report = {"event": event, "attrs": attrs}
        if takes_activation:
            report["takes_activation"] = True
        body = json.dumps(report).encode("utf-8")
        return Deferred.fromCoroutine(self._post(JOB_UPDATE, body, b"application/json"))

    def send_output(self, tar: BinaryIO) -> Deferred:
        """Post the output tar read from ``tar`` (a file at its start); fire with the answer."""
        return Deferred.fromCoroutine(self._post(JOB_OUTPUT, FileBodyProducer(tar), b"application/x-tar"))

    def send_checkpoint(self, tar: BinaryIO) -> Deferred:
        """Post a self-checkpointing job's checkpoint tar read from ``tar``; fire with the answer."""
        return Deferred.fromCoroutine(self._post(JOB_CHECKPOINT, FileBodyProducer(tar), b"application/x-tar"))

    async def _fetch(self, into: BinaryIO) -> int:
        response = await self._send(JOB_INPUT, None, None)
        written = 0

        def write(chunk: bytes) -> None:
            nonlocal written
            into.write(chunk)
            written += len(chunk)

        await self._guard(treq.collect(response, write))
        return written

    async def _post(self, route: Route, data, content_type: bytes):
        response = await self._send(route, data, content_type)
        raw = await self._guard(treq.content(response))
        return json.loads(raw) if raw else None

    async def _send(self, route: Route, data, content_type: bytes | None):
        client = AsyncClient(self.address, token=self._token(), http=self._http, timeout=self._timeout)
        response = await client.send(route, data, content_type,
                                     headers={TRANSFER_KEY_HEADER.encode("ascii"): [self._key.encode("latin-1")]},
                                     job_id=self.job_id)
        if self._heard is not None:
            self._heard()
        return response

    def retarget(self, address: str, transfer_key: str) -> None:
        """Report to the schedd at ``address`` with ``transfer_key`` from now on (a
        restarted schedd reconnected to the job)."""
        self.address = parse_address(address)
        self._key = transfer_key

    async def _guard(self, deferred: Deferred):
        try:
            return await deferred
        except _NETWORK_ERRORS as exc:
            raise Unreachable(f"no answer from the schedd at {self.address}: {exc}") from None
