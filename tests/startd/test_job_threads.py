"""The thread-count variables and BATCH_SYSTEM a job sees (HTCondor users manual,
"Services for Running Jobs", Environment Variables; STARTER_NUM_THREADS_ENV_VARS)."""

import shutil
import tempfile

import pytest
from twisted.internet import defer, reactor
from twisted.trial import unittest

import classad
from startd.job_threads import THREAD_COUNT_VARIABLES, slot_cpus, thread_environment
from startd.starter import Starter


def test_every_thread_count_variable_is_the_slots_cpus():
    """Each variable of HTCondor's default list is set to the slot's Cpus, BATCH_SYSTEM to HTCondor."""
    env = thread_environment(classad.ClassAd({"Cpus": 4}), {})
    assert {name: env[name] for name in THREAD_COUNT_VARIABLES} == dict.fromkeys(THREAD_COUNT_VARIABLES, "4")
    assert env["BATCH_SYSTEM"] == "HTCondor"
    assert {"OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "MKL_NUM_THREADS", "GOMAXPROCS", "PYTHON_CPU_COUNT",
            "ROOT_MAX_THREADS", "TF_NUM_THREADS", "OPENBLAS_NUM_THREADS"} <= set(THREAD_COUNT_VARIABLES)


def test_the_jobs_own_value_wins():
    """A variable the job's environment sets is left to the job."""
    env = thread_environment(classad.ClassAd({"Cpus": 8}), {"OMP_NUM_THREADS": "1"})
    assert "OMP_NUM_THREADS" not in env
    assert env["MKL_NUM_THREADS"] == "8"


@pytest.mark.parametrize(("cpus", "expected"), [(2, 2), (2.7, 2), (0, 1), ("four", 1), (None, 1)])
def test_slot_cpus_is_a_whole_positive_count(cpus, expected):
    """A missing, zero or non-numeric Cpus counts as one core; a fraction rounds down."""
    ad = classad.ClassAd({} if cpus is None else {"Cpus": cpus})
    assert slot_cpus(ad) == expected


@pytest.mark.integration  # a real job on the global reactor
class ThreadEnvironmentReachesTheJob(unittest.TestCase):
    def setUp(self):
        self.execute = tempfile.mkdtemp(prefix="roost-threads-")
        self.addCleanup(shutil.rmtree, self.execute, True)

    @defer.inlineCallbacks
    def test_job_sees_omp_num_threads_of_a_three_core_slot(self):
        """A job on a 3-core slot sees OMP_NUM_THREADS=3 and BATCH_SYSTEM=HTCondor; its own
        Environment keeps MKL_NUM_THREADS=1."""
        job = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": "/bin/sh", "Arguments": "-c env",
                               "Environment": "MKL_NUM_THREADS=1"})
        machine = classad.ClassAd({"Name": "slot1_1@node1", "Cpus": 3})
        outcome = yield Starter(reactor, job, machine, self.execute).start()
        with open(outcome.stdout_path, encoding="utf-8") as handle:
            lines = set(handle.read().splitlines())
        assert {"OMP_NUM_THREADS=3", "BATCH_SYSTEM=HTCondor", "MKL_NUM_THREADS=1"} <= lines
