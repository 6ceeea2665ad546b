"""The execution side over real HTTP on loopback: the schedd's routes served by a real
Twisted site, a fake startd on another port that claims, activates and acts as a
starter does (GET input, POST execute, run a real process, POST usage, output and
exit), and a job that goes Idle -> Running -> Completed with its output file in Iwd
and 000/001/005 in its event log. Trial-style: the real reactor runs."""

import io
import json
import os
import shutil
import subprocess
import tempfile

import pytest
import treq
from treq.client import HTTPClient
from twisted.internet import defer, reactor, threads
from twisted.trial import unittest
from twisted.web.client import Agent, HTTPConnectionPool

import classad
from daemoncore.config import Config
from daemoncore.security import issue_token
from daemoncore.security.accounts import current_account
from daemoncore.security.pool_trust import TrustedPools
from daemoncore.wire import schedd_routes, startd_routes
from daemoncore.wire.adcodec import ad_from_json
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.server import ApiResource, JsonReply, make_site
from jobmodel.eventlog import Event, EventLogWriter, EventType
from jobmodel.states import JobId, JobStatus
from schedd.execution import Execution
from schedd.flocking import FlockLevels, FlockSettings
from schedd.queue import JobQueue
from tests.support.waiting import wait_until
from transfer import STDERR_NAME, STDOUT_NAME, input_plan, receive_input, send_output

pytestmark = pytest.mark.integration  # runs the global reactor, jobs and servers

KEY = b"loopback-signing-key-0123456789abcdef"
DEADLINE = 30.0


#: The jobs' owner: this process's own account, since a root schedd writes a job's
#: outputs as its owner and an owner with no account here gets its job held.
OWNER = current_account().name


def token(name):
    return issue_token(KEY, f"{name}@pool", ["DAEMON"], lifetime=3600)


class LoopbackSchedd:
    """The schedd side: queue, event log per job (UserLog), real clients with tokens."""

    def __init__(self, spool, http, config_text=""):
        self.http = http
        self.clock = reactor
        self.queue = JobQueue(spool, reactor)
        self.config = Config.from_text(config_text)
        self.address = "127.0.0.1:0"
        self.finished = {}
        self.trusted_pools = TrustedPools()
        self.flock_levels = FlockLevels(FlockSettings(), reactor, 300.0)

    def record_all(self, transitions):
        for transition in transitions:
            self.record(transition)

    def record(self, transition):
        event = transition.event
        if event is None:
            return
        ad = self._ad(transition.job_id)
        if ad is not None and "UserLog" in ad:
            EventLogWriter(ad["UserLog"]).write([event])
        if event.type in (EventType.JOB_TERMINATED, EventType.JOB_HELD):
            waiting = self.finished.pop(transition.job_id, None)
            if waiting is not None:
                reactor.callLater(0, waiting.callback, event)

    def _ad(self, job_id):
        try:
            return self.queue.get_job(job_id)
        except KeyError:
            found = list(self.queue.history.query(f"ClusterId == {job_id.cluster} && ProcId == {job_id.proc}"))
            return found[0] if found else None

    def daemon_client(self, address, timeout=None, token_text=None):
        return AsyncClient(address, token=token("schedd"), http=self.http, timeout=timeout or 10)

    def queue_changed(self):
        pass

    def when_finished(self, job_id):
        self.finished[job_id] = defer.Deferred()
        return self.finished[job_id]


class FakeStartd:
    """A startd's routes and a starter's behaviour, as the schedd expects them."""

    def __init__(self, execute_dir, http):
        self.execute_dir = execute_dir
        self.http = http
        self.claims = {}
        self.calls = []
        self.runs = []

    def handlers(self):
        return {startd_routes.CLAIM: self.claim, startd_routes.ACTIVATE: self.activate,
                startd_routes.VACATE: self.vacate, startd_routes.RELEASE: self.release}

    def claim(self, request):
        body = request.json()
        self.calls.append("claim")
        dynamic = "dyn-" + body["claim_id"]
        self.claims[dynamic] = "Claimed"
        slot = {"Name": "slot1_1@fake", "Cpus": 1, "Memory": 512, "Requirements": True}
        return JsonReply({"claim_id": dynamic, "slot_name": "slot1_1@fake", "slot_ad": slot})

    def activate(self, request):
        body = request.json()
        self.calls.append("activate")
        assert self.claims.get(body["claim_id"]) == "Claimed"
        self.claims[body["claim_id"]] = "Busy"
        run = self.run_job(body)
        run.addErrback(lambda failure: failure)  # kept for the test to inspect
        self.runs.append(run)
        return JsonReply({"started": True})

    def vacate(self, request):
        self.calls.append("vacate")
        return JsonReply({"vacating": True})

    def release(self, request):
        self.calls.append("release")
        self.claims.pop(request.json()["claim_id"], None)
        return JsonReply({"released": True})

    @defer.inlineCallbacks
    def run_job(self, body):
        """What a starter does with one activation."""
        schedd = body["schedd_address"].strip("<>")
        job_id, key = body["job_id"], body["transfer_key"]
        ad = ad_from_json(body["job_ad"])
        headers = {"Authorization": [f"Bearer {token('startd')}"], schedd_routes.TRANSFER_KEY_HEADER: [key]}

        def url(route):
            return f"http://{schedd}{route.path(job_id=job_id)}"

        got = yield self.http.get(url(schedd_routes.JOB_INPUT), headers=headers)
        assert got.code == 200, (yield treq.content(got))
        tar = yield treq.content(got)
        sandbox = tempfile.mkdtemp(dir=self.execute_dir)
        received = yield threads.deferToThread(receive_input, io.BytesIO(tar), sandbox, input_plan(ad))

        def post(route, data):
            return self.http.post(url(route), data=data, headers=headers)

        def update(event, attrs):
            return post(schedd_routes.JOB_UPDATE, json.dumps({"event": event, "attrs": attrs}).encode())

        answer = yield update("execute", {})
        assert answer.code == 200, (yield treq.content(answer))
        executable = os.path.join(sandbox, input_plan(ad).executable)
        os.chmod(executable, 0o755)
        code = yield threads.deferToThread(_run, executable, sandbox)
        yield update("usage", {"ImageSize": 1024, "ResidentSetSize": 900, "MemoryUsage": 1,
                               "RemoteUserCpu": 0.01})
        stream = yield threads.deferToThread(lambda: b"".join(send_output(ad, sandbox, received.snapshot)))
        sent = yield post(schedd_routes.JOB_OUTPUT, stream)
        assert sent.code == 200, (yield treq.content(sent))
        self.claims[body["claim_id"]] = "Claimed"  # idle again before the exit goes out
        done = yield update("exit", {"ExitCode": code, "ExitBySignal": False, "RemoteWallClockTime": 1.0})
        shutil.rmtree(sandbox, ignore_errors=True)
        return json.loads((yield treq.content(done)))


def _run(executable, sandbox):
    with open(os.path.join(sandbox, STDOUT_NAME), "w") as out, open(os.path.join(sandbox, STDERR_NAME), "w") as err:
        return subprocess.run([executable], cwd=sandbox, stdout=out, stderr=err, stdin=subprocess.DEVNULL).returncode


def _listen(handlers):
    resource = ApiResource(handlers, token_verifier(KEY, reactor))
    return reactor.listenTCP(0, make_site(resource), interface="127.0.0.1")


class LoopbackTests(unittest.TestCase):
    timeout = 60

    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="roost-execution-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.iwd = os.path.join(self.root, "submit")
        os.makedirs(self.iwd)
        os.makedirs(os.path.join(self.root, "execute"))
        os.makedirs(os.path.join(self.root, "spool"))
        pool = HTTPConnectionPool(reactor)
        self.addCleanup(pool.closeCachedConnections)
        self.http = HTTPClient(Agent(reactor, pool=pool))
        self.schedd = LoopbackSchedd(os.path.join(self.root, "spool"), self.http)
        self.addCleanup(self.schedd.queue.close)
        self.execution = Execution(self.schedd)
        self.startd = FakeStartd(os.path.join(self.root, "execute"), self.http)
        schedd_port = _listen(self.execution.handlers())
        startd_port = _listen(self.startd.handlers())
        self.addCleanup(schedd_port.stopListening)
        self.addCleanup(startd_port.stopListening)
        self.schedd.address = f"127.0.0.1:{schedd_port.getHost().port}"
        self.startd_address = f"127.0.0.1:{startd_port.getHost().port}"
        self.execution.startService()
        self.addCleanup(self.execution.stopService)

    def submit(self, script, count=1, **extra):
        path = os.path.join(self.iwd, "job.sh")
        with open(path, "w") as out:
            out.write(script)
        os.chmod(path, 0o755)
        log = os.path.join(self.iwd, "job.log")
        ad = classad.ClassAd({"Owner": OWNER, "Cmd": path, "Iwd": self.iwd, "Out": "job.out",
                              "Err": "job.err", "UserLog": log, "RequestCpus": 1, "RequestMemory": 64,
                              **extra})
        ad["Requirements"] = classad.ExprTree("TARGET.Cpus >= RequestCpus")
        cluster = self.schedd.queue.submit_cluster(ad, [classad.ClassAd() for _ in range(count)])
        EventLogWriter(log).write([Event(EventType.SUBMIT, cluster, proc, int(reactor.seconds()),
                                         {"SubmitHost": f"<{self.schedd.address}>"}) for proc in range(count)])
        return [JobId(cluster, proc) for proc in range(count)]

    @defer.inlineCallbacks
    def negotiate(self):
        """Act as the negotiator: read the requests, match the first to the fake startd."""
        negotiator = AsyncClient(self.schedd.address, token=token("negotiator"), http=self.http, timeout=10)
        lines = []
        yield negotiator.stream(schedd_routes.RESOURCE_REQUESTS, lines.append, {"submitter": f"{OWNER}@pool"})
        slot_ad = {"Name": "slot1@fake", "Cpus": 1, "Memory": 512, "Requirements": True}
        match = {"request_id": lines[0]["request_id"], "job_id": None, "slot_name": "slot1@fake",
                 "startd_address": self.startd_address, "claim_id": "negotiated-claim", "slot_ad": slot_ad}
        answer = yield negotiator.call(schedd_routes.MATCHES, {"matches": [match]})
        return lines, answer

    @defer.inlineCallbacks
    def test_job_runs_idle_running_completed_with_output_and_events(self):
        """A real process runs through the fake startd; output returns to Iwd and the log
        holds Submit, Execute, Image size and Terminated."""
        [job] = self.submit("#!/bin/sh\necho hello from the job\necho result > result.txt\n")
        finished = self.schedd.when_finished(job)
        lines, answer = yield self.negotiate()
        self.assertEqual([line["count"] for line in lines], [1])
        self.assertEqual(answer, {"accepted": 1})
        event = yield _within(finished, DEADLINE)
        self.assertEqual(event.type, EventType.JOB_TERMINATED)
        self.assertEqual(event.attributes["ReturnValue"], 0)
        with open(os.path.join(self.iwd, "result.txt")) as result:
            self.assertEqual(result.read(), "result\n")
        with open(os.path.join(self.iwd, "job.out")) as out:
            self.assertEqual(out.read(), "hello from the job\n")
        [done] = list(self.schedd.queue.history.query())
        self.assertEqual(done["JobStatus"], JobStatus.COMPLETED)
        self.assertEqual((done["ExitCode"], done["NumJobStarts"]), (0, 1))
        self.assertGreater(done["BytesSent"], 0)
        self.assertGreater(done["BytesRecvd"], 0)
        with open(os.path.join(self.iwd, "job.log")) as log:
            numbers = [line[:3] for line in log if line[:3].isdigit() and line[3] == " "]
        self.assertEqual(numbers, ["000", "001", "006", "005"])
        yield _settle(self.startd)
        self.assertEqual(self.startd.calls, ["claim", "activate", "release"])

    @defer.inlineCallbacks
    def test_claim_is_reused_for_the_next_job_without_negotiating(self):
        """Two jobs of one owner run back to back on one claim, then it is released."""
        jobs = self.submit("#!/bin/sh\necho $$ > pid.txt\n", count=2)
        second = self.schedd.when_finished(jobs[1])
        yield self.negotiate()
        yield _within(second, DEADLINE)
        yield _settle(self.startd)
        self.assertEqual(self.startd.calls, ["claim", "activate", "activate", "release"])
        finished = sorted((ad["ProcId"], ad["JobStatus"]) for ad in self.schedd.queue.history.query())
        self.assertEqual(finished, [(0, JobStatus.COMPLETED), (1, JobStatus.COMPLETED)])


def _within(deferred, seconds):
    """``deferred``, failing with a timeout after ``seconds`` of the real reactor."""
    return deferred.addTimeout(seconds, reactor)


@defer.inlineCallbacks
def _settle(startd):
    """Wait for every starter run of ``startd`` to finish and for the claim's release."""
    for run in startd.runs:
        yield run
    yield defer.ensureDeferred(wait_until(reactor, lambda: "release" in startd.calls, "the claim's release"))
