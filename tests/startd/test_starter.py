"""Tests for startd.starter: real jobs run by a real reactor (trial-style tests)."""

import os
import shutil
import sys
import tempfile
import time

import psutil
import pytest
from twisted.internet import defer, reactor
from twisted.trial import unittest

import classad
from startd.errors import StarterError
from startd.sandbox import make_sandbox
from startd.spawn import JobProcess
from startd.starter import Starter, gpu_environment
from tests.support.waiting import wait_until
from transfer import output_plan, resolve_outputs, snapshot_sandbox
from transfer.errors import OutputMissingError


def job(cmd, **attrs):
    return classad.ClassAd({"ClusterId": 7, "ProcId": 0, "Cmd": cmd, **attrs})


MACHINE = classad.ClassAd({"Name": "slot1_1@node1", "Cpus": 1})


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _children_of(pid, count):
    """The pids of ``pid``'s descendants once there are ``count`` of them, else None."""
    children = [child.pid for child in psutil.Process(pid).children(recursive=True)]
    return children if len(children) == count else None


def _running(pid):
    """Whether ``pid`` is a live process (not gone, not a zombie)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.integration  # real jobs on the global reactor
class StarterTests(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="roost-starter-")
        self.addCleanup(shutil.rmtree, self.root, True)
        self.execute = os.path.join(self.root, "execute")
        os.makedirs(self.execute)

    def mktemp(self):
        return tempfile.mkdtemp(dir=self.root)

    def starter(self, ad, machine=MACHINE, **options):
        return Starter(reactor, ad, machine, self.execute, **options)

    @defer.inlineCallbacks
    def test_job_output_and_exit_code_are_reported(self):
        """A shell job's stdout lands in the sandbox and its exit code is reported."""
        run = self.starter(job("/bin/sh", Arguments="-c 'echo hello; exit 3'"))
        outcome = yield run.start()
        self.assertEqual(outcome.exit_code, 3)
        self.assertFalse(outcome.exit_by_signal)
        self.assertEqual(read(outcome.stdout_path), "hello\n")
        self.assertEqual(outcome.attributes()["ExitCode"], 3)
        run.remove_sandbox()
        self.assertFalse(os.path.exists(outcome.sandbox))

    @defer.inlineCallbacks
    def test_old_syntax_args_and_environment_reach_the_job(self):
        """Args (old syntax) and Env (old syntax) become argv and environment."""
        ad = job("/bin/sh", Args=r"-c env", Env="GREETING=hi;OTHER=1")
        outcome = yield self.starter(ad).start()
        text = read(outcome.stdout_path)
        self.assertIn("GREETING=hi\n", text)
        self.assertIn(f"_CONDOR_SCRATCH_DIR={outcome.sandbox}\n", text)
        self.assertIn("_CONDOR_JOB_AD=", text)
        self.assertIn("_CONDOR_SLOT=slot1_1\n", text)

    @defer.inlineCallbacks
    def test_new_syntax_arguments_keep_quoted_words(self):
        """Arguments in the new syntax group words with single quotes."""
        script = "import sys; print(sys.argv[1:])"
        ad = job(sys.executable, Arguments=f"-c '{script}' 'two words' 'it''s'",
                 Environment="A=1 'B=x y'")
        outcome = yield self.starter(ad).start()
        self.assertEqual(read(outcome.stdout_path), "['two words', \"it's\"]\n")

    @defer.inlineCallbacks
    def test_job_ad_file_and_stdin_and_named_output(self):
        """The job reads its ad through _CONDOR_JOB_AD, stdin from In, and writes Out."""
        box = make_sandbox(self.execute, "7.0")
        with open(os.path.join(box, "in.txt"), "w") as handle:
            handle.write("from stdin\n")
        ad = job("/bin/sh", Arguments="-c 'cat; cat $_CONDOR_JOB_AD | grep ^ClusterId'",
                 In="in.txt", Out="out.txt", Err="err.txt")
        outcome = yield self.starter(ad, sandbox=box).start()
        self.assertEqual(outcome.stdout_path, os.path.join(outcome.sandbox, "out.txt"))
        self.assertEqual(read(outcome.stdout_path), "from stdin\nClusterId = 7\n")

    def _filled_sandbox(self):
        """A sandbox holding an input directory, and its snapshot as input transfer leaves it."""
        box = make_sandbox(self.execute, "7.0")
        os.makedirs(os.path.join(box, "data"))
        with open(os.path.join(box, "x.csv"), "w") as handle:
            handle.write("1\n")
        return box, snapshot_sandbox(box)

    @defer.inlineCallbacks
    def test_new_files_are_outputs_and_remaps_rename_them(self):
        """Files the job makes are sent back, renamed by TransferOutputRemaps; inputs are not."""
        box, before = self._filled_sandbox()
        ad = job("/bin/sh", Arguments="-c 'echo r > result.txt; echo s > stats.txt; mkdir d'",
                 TransferOutputRemaps="result.txt = renamed/final.txt", Iwd="/submit")
        outcome = yield self.starter(ad, sandbox=box, transferred=True).start()
        plan = output_plan(ad)
        sent = resolve_outputs(plan, outcome.sandbox, before)
        self.assertEqual(sorted((item.name, plan.target(item.name)) for item in sent),
                         [("result.txt", "/submit/renamed/final.txt"), ("stats.txt", "/submit/stats.txt")])

    @defer.inlineCallbacks
    def test_transfer_output_lists_what_to_send_and_names_a_missing_one(self):
        """TransferOutput names the outputs; a name the job never made is an error naming it."""
        box, before = self._filled_sandbox()
        made = job("/bin/sh", Arguments="-c 'mkdir out; echo 1 > out/a; echo 2 > b'", TransferOutput="out")
        outcome = yield self.starter(made, sandbox=box, transferred=True).start()
        sent = resolve_outputs(output_plan(made), outcome.sandbox, before)
        self.assertEqual([(item.name, item.is_dir) for item in sent], [("out", True), ("out/a", False)])
        with self.assertRaises(OutputMissingError) as caught:
            resolve_outputs(output_plan(job("/bin/true", TransferOutput="out, never.txt")), outcome.sandbox, before)
        self.assertIn("'never.txt'", str(caught.exception))

    @defer.inlineCallbacks
    def test_vacate_kills_the_whole_process_tree(self):
        """Vacating a job that ignores SIGTERM kills it and its children after the vacate time."""
        ad = job("/bin/sh", Arguments="-c 'trap \"\" TERM; sleep 60 & sleep 60 & wait'")
        run = self.starter(ad, vacate_time=0.5)
        ended = run.start()
        children = yield defer.ensureDeferred(wait_until(
            reactor, lambda: _children_of(run.pid, 2), "the job starting its two children", seconds=10))
        started = time.monotonic()
        run.vacate()
        outcome = yield ended
        self.assertTrue(outcome.exit_by_signal)
        self.assertTrue(outcome.stopped)
        self.assertLess(time.monotonic() - started, 5)
        yield defer.ensureDeferred(wait_until(
            reactor, lambda: not any(_running(pid) for pid in children), "the job's children dying", seconds=5))

    @defer.inlineCallbacks
    def test_vacate_sends_the_jobs_kill_sig(self):
        """KillSig = "SIGUSR1": the job gets SIGUSR1 (its handler writes a file and exits), not SIGTERM."""
        box = make_sandbox(self.execute, "7.0")
        ad = job("/bin/sh", Arguments="-c 'trap \"echo usr1 > got; exit 3\" USR1; trap \"\" TERM; "
                                      "echo up > up; while true; do sleep 0.1; done'", KillSig="SIGUSR1")
        run = self.starter(ad, sandbox=box, vacate_time=30)
        ended = run.start()
        yield defer.ensureDeferred(wait_until(reactor, lambda: os.path.exists(os.path.join(box, "up")),
                                              "the job setting its traps", seconds=10))
        run.vacate()
        outcome = yield ended
        self.assertEqual(read(os.path.join(box, "got")), "usr1\n")
        self.assertFalse(outcome.exit_by_signal)

    @defer.inlineCallbacks
    def test_job_reaped_before_its_start_returns_is_still_reported(self):
        """A job that has exited before Twisted first tries to reap it (so it is reaped
        inside spawning) still ends with its exit code, not a lost run."""
        reaped_while_spawning = []

        class SlowToLook(JobProcess):
            @staticmethod
            def _start(*args):
                child = JobProcess._start(*args)
                # the child has exited (still unreaped) before it is registered for reaping
                os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
                return child

            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                reaped_while_spawning.append(self.ended.called)

        class Quick(Starter):
            process_class = SlowToLook

        run = Quick(reactor, job("/bin/sh", Arguments="-c 'exit 4'"), MACHINE, self.execute)
        outcome = yield run.start()
        self.assertEqual(reaped_while_spawning, [True])
        self.assertEqual(outcome.exit_code, 4)
        self.assertIsNotNone(run.pid)
        run.remove_sandbox()

    @defer.inlineCallbacks
    def test_usage_is_sampled_from_the_running_tree(self):
        """A job that burns CPU and holds memory reports RemoteUserCpu and ResidentSetSize."""
        script = "import time\nx = bytearray(50_000_000)\nt = time.time()\nwhile time.time() - t < 0.6: pass"
        run = self.starter(job(sys.executable, Arguments=f"-c '{script}'"), sample_interval=0.1)
        outcome = yield run.start()
        attrs = outcome.attributes()
        self.assertEqual(attrs["ExitCode"], 0)
        self.assertGreater(attrs["RemoteUserCpu"], 0.1)
        self.assertGreater(attrs["ResidentSetSize"], 40_000)
        self.assertEqual(attrs["MemoryUsage"], -(-attrs["ResidentSetSize"] // 1024))

    @defer.inlineCallbacks
    def test_gpu_environment_reaches_the_job(self):
        """CUDA_VISIBLE_DEVICES and HAMi limits come from the slot's assigned GPUs."""
        machine = classad.ClassAd({"Name": "slot1_1@node1", "AssignedGPUs": "GPU-aaaa0000",
                                   "AssignedGPUMemoryMb": 8192, "AssignedGPUCores": 30})
        outcome = yield self.starter(job("/bin/sh", Arguments="-c env"), machine=machine).start()
        text = read(outcome.stdout_path)
        self.assertIn("CUDA_VISIBLE_DEVICES=GPU-aaaa0000\n", text)
        self.assertIn("CUDA_DEVICE_MEMORY_LIMIT_0=8192m\n", text)
        self.assertIn("CUDA_DEVICE_SM_LIMIT=30\n", text)

    def test_missing_executable_is_a_clear_error_and_leaves_no_sandbox(self):
        """A job whose executable is missing is refused, naming it, and its sandbox is removed."""
        with self.assertRaises(StarterError) as caught:
            self.starter(job("/no/such/program")).start()
        self.assertIn("'/no/such/program' does not exist", str(caught.exception))
        self.assertEqual(os.listdir(self.execute), [])

    def test_missing_standard_input_is_a_clear_error(self):
        """A job whose In file is not in its sandbox is refused, naming the file."""
        with self.assertRaises(StarterError) as caught:
            self.starter(job("/bin/true", In="absent.txt")).start()
        self.assertIn("absent.txt", str(caught.exception))
        self.assertEqual(os.listdir(self.execute), [])


def test_no_gpus_on_a_gpu_machine_hides_all_cards():
    """A slot without cards on a machine that has some gets an empty CUDA_VISIBLE_DEVICES."""
    assert gpu_environment(classad.ClassAd({"DetectedGPUs": "GPU-1"})) == {"CUDA_VISIBLE_DEVICES": ""}
    assert gpu_environment(classad.ClassAd({})) == {}
