"""When a job's exit is a self-checkpoint, by the starter's rule (condor_starter
``VanillaProc::JobReaper`` with ``computeDesiredExitStatus("Checkpoint", ...)``), and
what the slot ad offers such jobs (submit's Requirements, ``SetRequirements`` in
condor_utils/submit_utils.cpp)."""

import signal

import classad
from startd.discovery import Machine, linux_platform
from startd.self_checkpoint import carried, first_checkpoint_number, is_checkpoint_exit
from startd.slot_ads import machine_attributes
from startd.usage import Usage


def job(**attrs) -> classad.ClassAd:
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, **attrs})


def test_the_checkpoint_exit_code_with_want_ft_on_checkpoint_is_a_checkpoint():
    """JobReaper: WantFTOnCheckpoint true and the exit equal to SuccessCheckpointExitCode."""
    ad = job(WantFTOnCheckpoint=True, SuccessCheckpointExitCode=85)
    assert is_checkpoint_exit(ad, 85, None)
    assert not is_checkpoint_exit(ad, 0, None)
    assert not is_checkpoint_exit(ad, 1, None)


def test_without_want_ft_on_checkpoint_the_code_is_an_ordinary_exit():
    """JobReaper looks for the special exit only when WantFTOnCheckpoint is true."""
    assert not is_checkpoint_exit(job(SuccessCheckpointExitCode=85), 85, None)
    assert not is_checkpoint_exit(job(WantFTOnCheckpoint=False, SuccessCheckpointExitCode=85), 85, None)


def test_a_checkpoint_by_signal_compares_the_signal_not_the_code():
    """computeDesiredExitStatus: with SuccessCheckpointExitBySignal the wanted status is
    death by SuccessCheckpointExitSignal; an exit code never matches it."""
    ad = job(WantFTOnCheckpoint=True, SuccessCheckpointExitBySignal=True,
             SuccessCheckpointExitSignal=int(signal.SIGUSR2), SuccessCheckpointExitCode=85)
    assert is_checkpoint_exit(ad, None, int(signal.SIGUSR2))
    assert not is_checkpoint_exit(ad, 85, None)
    assert not is_checkpoint_exit(ad, None, int(signal.SIGTERM))


def test_a_death_by_signal_is_not_an_exit_code_checkpoint():
    """A job killed by a signal did not exit with the promised code."""
    ad = job(WantFTOnCheckpoint=True, SuccessCheckpointExitCode=85)
    assert not is_checkpoint_exit(ad, None, 85)


def test_checkpoints_are_numbered_from_zero_and_go_on_after_the_last():
    """The starter numbers the first checkpoint 0 and each later one past the job's CheckpointNumber."""
    assert first_checkpoint_number(job()) == 0
    assert first_checkpoint_number(job(CheckpointNumber=3)) == 4
    assert first_checkpoint_number(job(CheckpointNumber="x")) == 0


def test_slots_satisfy_what_submit_requires_of_a_self_checkpointing_job():
    """submit_utils.cpp's SetRequirements asks a self-checkpointing job's slot for
    HasSelfCheckpointTransfers and a CondorVersion of 8.9.7 or later
    (versioncmp of the second word of the ``$CondorVersion: ...$`` string)."""
    machine = Machine("node1", 2, 1024, 10_000, 2, 1024, linux_platform("x86_64", 'ID=debian\nVERSION_ID="12"\n'),
                      0.0)
    attrs = machine_attributes(machine, {})
    slot = classad.ClassAd(attrs)
    wanted = classad.ExprTree('TARGET.HasSelfCheckpointTransfers && '
                              'versioncmp(split(TARGET.CondorVersion)[1],"8.9.7") >= 0')
    assert classad.ClassAd({"Requirements": wanted}).evaluate("Requirements", target=slot) is True


def test_a_run_restarted_in_place_adds_up_its_cpu_and_keeps_its_memory_peak():
    """A checkpoint exit does not end the run (JobReaper restarts the job under the same
    starter), so the run's RemoteUserCpu/RemoteSysCpu cover every segment; memory
    figures are peaks."""
    first = Usage(user_cpu=2.5, sys_cpu=0.5, rss_kb=4000, image_kb=9000)
    second = Usage(user_cpu=1.0, sys_cpu=0.25, rss_kb=3000, image_kb=12000)
    assert carried(carried(Usage(), first), second) == Usage(3.5, 0.75, 4000, 12000)
