"""Tests for transfer.steps: a whole job's transfer, shadow to starter and
back, over a real OS pipe, with a real process as the job."""

import os
import subprocess
import threading

import pytest

import classad
from transfer.errors import InputMissingError, OutputMissingError, TransferLimitError
from transfer.steps import input_attributes, output_attributes, receive_input, receive_output, send_input, send_output


def through_pipe(chunks, receive):
    """Write ``chunks`` into an OS pipe from a thread while ``receive`` reads the other end."""
    read_fd, write_fd = os.pipe()
    failure = []

    def writer():
        try:
            with os.fdopen(write_fd, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
        except BaseException as exc:  # reported to the test below
            failure.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with os.fdopen(read_fd, "rb") as source:
            result = receive(source)
    finally:
        thread.join()
    if failure:
        raise failure[0]
    return result


@pytest.fixture
def submit_dir(tmp_path):
    home = tmp_path / "home"
    (home / "data").mkdir(parents=True)
    (home / "job.sh").write_text("#!/bin/sh\ncat data/*.txt > sum.txt\nmkdir res\necho r > res/r1\n"
                                 "read line; echo \"stdin: $line\"; echo oops >&2\n")
    (home / "job.sh").chmod(0o755)
    (home / "data" / "a.txt").write_text("A\n")
    (home / "data" / "b.txt").write_text("B\n")
    (home / "in.txt").write_text("from stdin\n")
    return home


def ad_for(home, **attrs):
    base = {"ClusterId": 12, "ProcId": 3, "Cmd": str(home / "job.sh"), "Iwd": str(home),
            "In": "in.txt", "Out": "job.out", "Err": "job.err", "TransferInput": "data",
            "TransferOutput": "sum.txt,res", "TransferOutputRemaps": "sum.txt = results/total.txt"}
    base.update(attrs)
    return classad.ClassAd(base)


def run_in(sandbox, executable, stdin):
    with open(os.path.join(sandbox, stdin)) as source, \
         open(os.path.join(sandbox, "_condor_stdout"), "w") as out, \
         open(os.path.join(sandbox, "_condor_stderr"), "w") as err:
        subprocess.run([os.path.join(sandbox, executable)], cwd=sandbox, stdin=source,
                       stdout=out, stderr=err, check=True)


@pytest.mark.integration  # runs the job
def test_job_files_go_out_and_come_back_with_remaps(submit_dir, tmp_path):
    """Inputs reach the sandbox through a pipe, the job runs, outputs land in Iwd remapped."""
    ad = ad_for(submit_dir)
    sandbox = tmp_path / "execute" / "dir_1"
    sandbox.mkdir(parents=True)
    sent = send_input(ad)
    got = through_pipe(sent.stream, lambda source: receive_input(source, str(sandbox), sent.plan))
    assert sorted(os.listdir(sandbox)) == ["data", "in.txt", "job.sh"]
    assert input_attributes(got.stats) == {"BytesSent": got.stats.bytes, "TransferInputSizeMB": 1}
    run_in(str(sandbox), sent.plan.executable, sent.plan.stdin)
    staging = tmp_path / "staging"
    staging.mkdir()
    stats = through_pipe(send_output(ad, str(sandbox), got.snapshot),
                         lambda source: receive_output(source, ad, str(staging)))
    assert (submit_dir / "results" / "total.txt").read_text() == "A\nB\n"
    assert (submit_dir / "res" / "r1").read_text() == "r\n"
    assert (submit_dir / "job.out").read_text() == "stdin: from stdin\n"
    assert (submit_dir / "job.err").read_text() == "oops\n"
    assert output_attributes(stats)["BytesRecvd"] == stats.bytes == 4 + 2 + 18 + 5


@pytest.mark.integration  # runs the job
def test_default_output_brings_back_only_what_the_job_made(submit_dir, tmp_path):
    """Without TransferOutput, new top-level files return but unchanged inputs do not."""
    ad = ad_for(submit_dir)
    del ad["TransferOutput"]
    del ad["TransferOutputRemaps"]
    sandbox = tmp_path / "box"
    sandbox.mkdir()
    sent = send_input(ad)
    got = through_pipe(sent.stream, lambda s: receive_input(s, str(sandbox), sent.plan))
    run_in(str(sandbox), "job.sh", "in.txt")
    os.unlink(submit_dir / "in.txt")
    through_pipe(send_output(ad, str(sandbox), got.snapshot),
                 lambda s: receive_output(s, ad, str(tmp_path)))
    assert (submit_dir / "sum.txt").exists()
    assert not (submit_dir / "in.txt").exists()
    assert not (submit_dir / "r1").exists()


def test_missing_input_is_a_hold_before_anything_is_sent(submit_dir):
    """A missing transfer_input_files entry gives HoldReasonCode 13 with errno 2."""
    ad = ad_for(submit_dir, TransferInput="data,absent.dat")
    with pytest.raises(InputMissingError) as caught:
        send_input(ad)
    assert caught.value.hold_attributes() == {
        "HoldReason": f"job 12.3: cannot read input file '{submit_dir}/absent.dat': "
                      "No such file or directory",
        "HoldReasonCode": 13, "HoldReasonSubCode": 2}


def test_missing_output_is_an_output_hold(submit_dir, tmp_path):
    """A listed output the job did not write gives HoldReasonCode 12."""
    with pytest.raises(OutputMissingError) as caught:
        send_output(ad_for(submit_dir), str(tmp_path), {})
    assert caught.value.hold_code == 12


def test_max_transfer_input_mb_holds_with_code_32(submit_dir):
    """MaxTransferInputMB caps the input stream; exceeding it is hold code 32."""
    (submit_dir / "data" / "big.txt").write_bytes(b"x" * (2 << 20))
    sent = send_input(ad_for(submit_dir, MaxTransferInputMB=1))
    with pytest.raises(TransferLimitError) as caught:
        b"".join(sent.stream)
    assert caught.value.hold_code == 32
