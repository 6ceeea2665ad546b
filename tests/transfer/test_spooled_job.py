"""The ad rules of -spool (transfer.spooled_job), from HTCondor: condor_submit queues a
spooled job held with HoldReasonCode 16 and a ten-day LeaveJobInQueue (the remote-submit
rule of condor_submit), and qmgmt.cpp rewriteSpooledJobAd points Iwd at the spool,
keeping the originals as SUBMIT_<attr>."""

from classad import ClassAd, ExprTree
from transfer.spooled_job import (
    LEAVE_IN_QUEUE,
    fetch_plan,
    held_for_spooling,
    spool_directory,
    spooled_inputs,
    spooled_rewrite,
    waits_for_spooling,
)


def job(**attrs):
    ad = ClassAd({"ClusterId": 7, "ProcId": 1, "Iwd": "/home/alice/run", "Cmd": "/home/alice/run/bin/job.sh",
                  "TransferInput": "data/a.txt,b.txt,https://example.org/c.txt", "In": "/dev/null",
                  "UserLog": "/home/alice/run/job.log", "Out": "job.out", "LeaveJobInQueue": False})
    for name, value in attrs.items():
        ad[name] = value
    return ad


def test_a_spooled_job_is_queued_held_with_code_16_and_kept_ten_days():
    """condor_submit -spool: JobStatus 5, HoldReasonCode 16 'Spooling input data files', and
    LeaveJobInQueue keeps the completed job for 864000 s; a user's own LeaveJobInQueue stays."""
    changes = held_for_spooling(job())
    assert changes["JobStatus"] == 5 and changes["HoldReasonCode"] == 16
    assert changes["HoldReason"] == "Spooling input data files"
    assert str(changes["LeaveJobInQueue"]) == str(ExprTree(LEAVE_IN_QUEUE))
    assert "LeaveJobInQueue" not in held_for_spooling(job(LeaveJobInQueue=True))
    held = job(**held_for_spooling(job()))
    assert waits_for_spooling(held) and not waits_for_spooling(job())


def test_leave_in_queue_holds_a_completed_job_for_ten_days():
    """The expression is true for a job completed less than 864000 s ago and false after."""
    ad = job(JobStatus=4, CompletionDate=0)
    ad["LeaveJobInQueue"] = ExprTree(LEAVE_IN_QUEUE)
    assert ad.evaluate("LeaveJobInQueue") is True
    ad["CompletionDate"] = 1  # 1970: long past ten days
    assert ad.evaluate("LeaveJobInQueue") is False


def test_rewrite_points_iwd_at_the_spool_and_keeps_the_originals():
    """rewriteSpooledJobAd: SUBMIT_Iwd, Iwd the spool, Cmd/TransferInput/UserLog cut to their
    names (URLs kept) with SUBMIT_ copies; /dev/null and relative outputs are left alone."""
    changes = spooled_rewrite(job(), "/spool/7/1/x")
    assert changes["SUBMIT_Iwd"] == "/home/alice/run" and changes["Iwd"] == "/spool/7/1/x"
    assert changes["Cmd"] == "job.sh" and changes["SUBMIT_Cmd"] == "/home/alice/run/bin/job.sh"
    assert changes["TransferInput"] == "a.txt,b.txt,https://example.org/c.txt"
    assert changes["UserLog"] == "job.log"
    assert "In" not in changes and "Out" not in changes
    assert spooled_rewrite(job(SUBMIT_Iwd="/x"), "/spool") == {}


def test_an_executable_not_transferred_keeps_its_path():
    """transfer_executable = false: Cmd is not spooled, so its path stays (AttrXferBool)."""
    assert "Cmd" not in spooled_rewrite(job(TransferExecutable=False), "/spool")


def test_remaps_wait_for_the_fetch_except_urls():
    """TransferOutputRemaps moves to SUBMIT_TransferOutputRemaps; only URL remaps stay."""
    changes = spooled_rewrite(job(TransferOutputRemaps="out.txt=res/out.txt;big=s3://b/big"), "/spool")
    assert changes["SUBMIT_TransferOutputRemaps"] == "out.txt=res/out.txt"
    assert changes["TransferOutputRemaps"] == "big=s3://b/big"


def test_fetch_goes_back_to_the_submit_directory_with_the_remaps():
    """condor_transfer_data writes into SUBMIT_Iwd with SUBMIT_TransferOutputRemaps applied."""
    ad = job(**spooled_rewrite(job(TransferOutputRemaps="out.txt=res/out.txt"), "/spool/7/1/x"))
    plan = fetch_plan(ad)
    assert plan.target("out.txt") == "/home/alice/run/res/out.txt"
    assert plan.target("other.txt") == "/home/alice/run/other.txt"


def test_spooled_inputs_are_not_outputs():
    """The names the spool holds as inputs (executable, stdin, input files) are left out of a fetch."""
    ad = job(**spooled_rewrite(job(), "/spool"))
    assert spooled_inputs(ad) == {"job.sh", "a.txt", "b.txt"}
    assert spool_directory("/s", 7, 1) == "/s/7/1/cluster7.proc1.spool"
