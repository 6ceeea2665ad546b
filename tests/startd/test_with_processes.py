"""Integration: real ``python -m collector`` and ``python -m startd`` processes on
loopback, and a fake schedd (JOB_INPUT, JOB_UPDATE, JOB_OUTPUT) served by a real
Twisted site in this process. A real /bin/sh job is claimed, activated, runs, sends
its output back and reports its exit; a vacated job's whole tree dies.

Trial-style, so the real reactor runs only while each test does (other trial tests
in the same session keep working)."""

import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile

import psutil
import pytest
from treq.client import HTTPClient
from twisted.internet import defer, reactor
from twisted.trial import unittest
from twisted.web.client import Agent, HTTPConnectionPool

import classad
from daemoncore.security import create_signing_key, issue_token
from daemoncore.wire import collector_routes, schedd_routes, startd_routes
from daemoncore.wire.async_client import AsyncClient
from daemoncore.wire.auth import token_verifier
from daemoncore.wire.errors import Forbidden, RemoteError
from daemoncore.wire.server import ApiResource, JsonReply, StreamReply, make_site
from tests.support.waiting import address_in, wait_until
from transfer import receive_output, send_input

pytestmark = pytest.mark.integration  # real collector and startd processes

TRANSFER_KEY = "k" * 40


class FakeSchedd:
    """The schedd's starter routes for jobs it was told about; records every update."""

    def __init__(self, staging):
        self.jobs = {}
        self.updates = []
        self.outputs = []
        self.staging = staging

    def handlers(self):
        return {schedd_routes.JOB_INPUT: self.job_input, schedd_routes.JOB_OUTPUT: self.job_output,
                schedd_routes.JOB_UPDATE: self.job_update}

    def _job(self, request):
        if request.header("X-Roost-Transfer-Key") != TRANSFER_KEY or request.query:
            raise Forbidden("wrong transfer key")
        return self.jobs[request.params["job_id"]]

    def job_input(self, request):
        ad = self._job(request)
        if "DamagedInput" in ad:
            return StreamReply(iter([b"this is not a tar stream" * 40]))
        return StreamReply(iter(send_input(ad).stream))

    def job_output(self, request):
        self.outputs.append(request.params["job_id"])
        stats = receive_output(io.BytesIO(request.body), self._job(request), self.staging)
        return JsonReply({"files": stats.files, "bytes": stats.bytes})

    def job_update(self, request):
        self._job(request)
        body = request.json()
        self.updates.append((request.params["job_id"], body["event"], body.get("attrs", {})))
        return JsonReply({"job_status": 2})

    def events(self, job_id):
        return [event for job, event, _ in self.updates if job == job_id]

    def attrs_of(self, job_id, event):
        return [attrs for job, name, attrs in self.updates if job == job_id and name == event][-1]


class StartdProcessTests(unittest.TestCase):
    timeout = 90

    def setUp(self):
        return defer.Deferred.fromCoroutine(self._set_up())

    async def _set_up(self):
        self.dir = tempfile.mkdtemp(prefix="roost-startd-")
        # jobs of a root startd run as other accounts, which must reach EXECUTE inside
        # (as in a real installation); the key and logs here stay readable by root only
        os.chmod(self.dir, 0o711)
        if not os.environ.get("ROOST_KEEP_TEST_DIRS"):
            self.addCleanup(shutil.rmtree, self.dir, True)
        key_file = os.path.join(self.dir, "POOL")
        self.key = create_signing_key(key_file)
        config = os.path.join(self.dir, "config")
        self.execute = os.path.join(self.dir, "execute")
        with open(config, "w") as out:
            out.write(f"LOCAL_DIR = {self.dir}\nLOG = {self.dir}\nEXECUTE = {self.execute}\n"
                      f"SEC_TOKEN_POOL_SIGNING_KEY_FILE = {key_file}\nTRUST_DOMAIN = pool\n"
                      "GPU_DISCOVERY = simulated:2xA100:40G\nNUM_CPUS = 2\nUPDATE_INTERVAL = 2\n"
                      "STARTER_UPDATE_INTERVAL = 1\nMACHINE_MAX_VACATE_TIME = 2\n")
        self.env = {**os.environ, "ROOST_CONFIG": config, "HOME": self.dir}
        self.env.pop("ROOST_TOKEN", None)
        os.makedirs(self.execute)
        leftover = os.path.join(self.execute, "dir_9.9_leftover")
        os.makedirs(leftover)
        self.leftover = leftover
        self.collector = await self._start("collector", self.env)
        self.startd = await self._start("startd", {**self.env, "_ROOST_COLLECTOR_HOST": self.collector})
        self.http = HTTPClient(Agent(reactor, pool=HTTPConnectionPool(reactor, persistent=False)))
        self.schedd = FakeSchedd(os.path.join(self.dir, "staging"))
        os.makedirs(self.schedd.staging)
        site = make_site(ApiResource(self.schedd.handlers(), token_verifier(self.key, reactor)))
        self.port = reactor.listenTCP(0, site, interface="127.0.0.1")
        self.addCleanup(self.port.stopListening)
        self.schedd_address = f"<127.0.0.1:{self.port.getHost().port}>"

    async def _start(self, name, env):
        address_file = os.path.join(self.dir, f".{name}_address")
        log = open(os.path.join(self.dir, f"{name}.stderr"), "w")
        self.addCleanup(log.close)
        process = subprocess.Popen([sys.executable, "-m", name, "--port", "0", "--address-file", address_file],
                                   env=env, stderr=log)
        self.addCleanup(self._stop, process)
        try:
            return await wait_until(reactor, lambda: address_in(address_file), f"{name} starting")
        except AssertionError:
            raise AssertionError(open(log.name).read()) from None

    @staticmethod
    def _stop(process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def client(self, address):
        token = issue_token(self.key, "schedd@pool", ["DAEMON"], lifetime=3600)
        return AsyncClient(address, token=token, http=self.http, timeout=10)

    async def machine_ads(self, private=False):
        found = await self.client(self.collector).call(collector_routes.QUERY, {"private": private},
                                                        ad_type="Machine")
        return {ad["Name"]: ad for ad in found}

    async def claim(self, job):
        """CLAIM the partitionable slot for ``job`` with the ClaimId from its private ad."""
        private = await wait_until(reactor, self.machine_ads_private, "the slots reaching the collector")
        [name] = [n for n in private if n.startswith("slot1@")]
        body = {"claim_id": private[name]["ClaimId"], "job_ad": job, "schedd_address": self.schedd_address}
        return await self.client(self.startd).call(startd_routes.CLAIM, body)

    async def machine_ads_private(self):
        return await self.machine_ads(private=True)

    async def activate(self, grant, job_id, job):
        self.schedd.jobs[job_id] = classad.ClassAd(job)
        body = {"claim_id": grant["claim_id"], "job_id": job_id, "job_ad": job,
                "transfer_key": TRANSFER_KEY, "schedd_address": self.schedd_address}
        return await self.client(self.startd).call(startd_routes.ACTIVATE, body)

    def job_ad(self, job_id, script, **extra):
        iwd = os.path.join(self.dir, f"submit-{job_id}")
        os.makedirs(iwd)
        with open(os.path.join(iwd, "job.sh"), "w") as out:
            out.write(script)
        cluster, proc = job_id.split(".")
        return {"ClusterId": int(cluster), "ProcId": int(proc), "Owner": "alice", "User": "alice@pool",
                "Cmd": os.path.join(iwd, "job.sh"), "Iwd": iwd, "Out": "job.out", "Err": "job.err",
                "RequestCpus": 1, "RequestMemory": 64, "RequestDisk": 1024, **extra}

    # --- the tests ---

    def test_a_real_job_runs_its_output_arrives_and_its_exit_is_reported(self):
        """Claim carves slot1_1, activate runs the script with its input file, the output
        files land in Iwd, and execute/exit reach the schedd; the claim stays for reuse
        until released, when the dynamic slot goes."""
        return defer.Deferred.fromCoroutine(self._runs_a_job())

    async def _runs_a_job(self):
        self.assertFalse(os.path.exists(self.leftover), "leftover sandboxes are cleaned at start-up")
        public = await wait_until(reactor, self.machine_ads, "public slot ads")
        [pslot] = public.values()
        self.assertEqual((pslot["SlotType"], pslot["Cpus"], pslot["GPUs"]), ("Partitionable", 2, 2))
        self.assertEqual(pslot["StartdIpAddr"], f"<{self.startd}>")
        self.assertEqual(pslot["MyAddress"], f"<{self.startd}>")

        job = self.job_ad("1.0", "#!/bin/sh\necho hello from the job\ncat data.txt > result.txt\n"
                                 "echo oops >&2\nexit 7\n", TransferInput="data.txt")
        with open(os.path.join(job["Iwd"], "data.txt"), "w") as out:
            out.write("the input\n")
        grant = await self.claim(job)
        self.assertTrue(grant["slot_name"].startswith("slot1_1@"))
        self.assertEqual(grant["slot_ad"]["Cpus"], 1)
        self.assertEqual(await self.activate(grant, "1.0", job), {"started": True})

        await wait_until(reactor, lambda: "exit" in self.schedd.events("1.0"), "the exit report")
        self.assertEqual(self.schedd.outputs, ["1.0"])
        events = self.schedd.events("1.0")
        self.assertEqual(events[0], "execute")
        self.assertEqual(self.schedd.attrs_of("1.0", "execute")["RemoteHost"], grant["slot_name"])
        exit_attrs = self.schedd.attrs_of("1.0", "exit")
        self.assertEqual((exit_attrs["ExitCode"], exit_attrs["ExitBySignal"]), (7, False))
        self.assertIn("RemoteWallClockTime", exit_attrs)
        iwd = job["Iwd"]
        self.assertEqual(open(os.path.join(iwd, "job.out")).read(), "hello from the job\n")
        self.assertEqual(open(os.path.join(iwd, "job.err")).read(), "oops\n")
        self.assertEqual(open(os.path.join(iwd, "result.txt")).read(), "the input\n")
        self.assertFalse(os.path.exists(os.path.join(iwd, ".job.ad")), "the starter's own files stay behind")
        await wait_until(reactor, lambda: not [n for n in os.listdir(self.execute) if n.startswith("dir_")],
                         "the sandbox being removed")

        slots = await wait_until(reactor, lambda: self._dslot_in(("Claimed", "Idle")), "the slot back to Claimed/Idle")
        self.assertIn(grant["slot_name"], slots)
        released = await self.client(self.startd).call(startd_routes.RELEASE, {"claim_id": grant["claim_id"]})
        self.assertEqual(released, {"released": True})
        gone = await wait_until(reactor, self._only_the_partitionable_slot, "the dynamic slot going")
        self.assertEqual(gone["Cpus"], 2)
        with self.assertRaises(RemoteError) as caught:
            await self.client(self.startd).call(startd_routes.RELEASE, {"claim_id": grant["claim_id"]})
        self.assertEqual(caught.exception.status, 404)

    async def _dslot_in(self, pair):
        public = await self.machine_ads()
        return {n: ad for n, ad in public.items() if (ad["State"], ad["Activity"]) == pair}

    async def _only_the_partitionable_slot(self):
        public = await self.machine_ads()
        return list(public.values())[0] if len(public) == 1 else None

    def test_vacate_kills_the_job_tree_and_reports_eviction(self):
        """A vacated job that started a background child loses its whole tree; the schedd
        hears ``evicted`` (not ``exit``) and the claim ends."""
        return defer.Deferred.fromCoroutine(self._vacates())

    async def _vacates(self):
        job = self.job_ad("2.0", "#!/bin/sh\nsleep 300 &\necho $! > pids\necho $$ >> pids\n"
                                 "trap '' TERM\nwait\n", TransferOutput="pids")
        grant = await self.claim(job)
        await self.activate(grant, "2.0", job)
        pids_file = await wait_until(reactor, self._pids_file, "the job writing its pids")
        pids = [int(p) for p in open(pids_file).read().split()]
        self.assertEqual(len(pids), 2)
        self.assertTrue(all(_alive(p) for p in pids))
        await self.client(self.startd).call(startd_routes.VACATE, {"claim_id": grant["claim_id"],
                                                                   "reason": "test", "graceful": True})
        await wait_until(reactor, lambda: "evicted" in self.schedd.events("2.0"), "the eviction report", seconds=20)
        self.assertNotIn("exit", self.schedd.events("2.0"))
        self.assertEqual(self.schedd.attrs_of("2.0", "evicted")["Reason"], "test")
        await wait_until(reactor, lambda: not any(_alive(p) for p in pids), "the job tree dying")
        await wait_until(reactor, self._only_the_partitionable_slot, "the vacated claim ending")

    def test_a_damaged_input_stream_holds_the_job_with_code_13(self):
        """Input the starter cannot unpack is reported as a hold (TransferInputError) and
        the job never runs; the claim stays, ready for another job."""
        return defer.Deferred.fromCoroutine(self._holds_on_bad_input())

    async def _holds_on_bad_input(self):
        job = self.job_ad("3.0", "#!/bin/sh\ntouch ran\n", DamagedInput=True)
        grant = await self.claim(job)
        await self.activate(grant, "3.0", job)
        await wait_until(reactor, lambda: "hold" in self.schedd.events("3.0"), "the hold report")
        hold = self.schedd.attrs_of("3.0", "hold")
        self.assertEqual(hold["HoldReasonCode"], 13)
        self.assertIn("not a valid tar stream", hold["HoldReason"])
        self.assertEqual(self.schedd.events("3.0"), ["hold"])
        await wait_until(reactor, lambda: self._dslot_in(("Claimed", "Idle")), "the claim back to Claimed/Idle")

    def test_a_job_that_leaves_no_output_sends_none_and_reports_its_exit(self):
        """With nothing to send back, the starter skips JOB_OUTPUT and goes straight to
        the exit report (an empty stream would change nothing at the schedd)."""
        return defer.Deferred.fromCoroutine(self._no_output())

    async def _no_output(self):
        job = self.job_ad("4.0", "#!/bin/sh\nexit 0\n", Out="/dev/null", Err="/dev/null")
        grant = await self.claim(job)
        await self.activate(grant, "4.0", job)
        await wait_until(reactor, lambda: "exit" in self.schedd.events("4.0"), "the exit report")
        # a job this short usually ends within the execute report's delay, and its exit
        # report then tells its start too (the shadow writes the execute event first)
        events = self.schedd.events("4.0")
        self.assertIn(events, (["execute", "exit"], ["exit"]))
        self.assertEqual(self.schedd.attrs_of("4.0", events[0])["RemoteHost"], grant["slot_name"])
        self.assertEqual(self.schedd.attrs_of("4.0", "exit")["ExitCode"], 0)
        self.assertEqual(self.schedd.outputs, [])

    def _pids_file(self):
        for name in os.listdir(self.execute):
            path = os.path.join(self.execute, name, "pids")
            if name.startswith("dir_") and os.path.exists(path) and len(open(path).read().split()) == 2:
                return path
        return None


def _alive(pid):
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
