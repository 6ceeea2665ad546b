"""Inputs and outputs that are not regular files, and sizes over the limit, are refused
before anything reads them: a FIFO or a device would block the daemon or never end."""

import os

import pytest

import classad
from transfer.archive import PackStream
from transfer.errors import BadTransferPathError, TransferLimitError
from transfer.plan import input_plan, output_plan
from transfer.resolve import PackItem, resolve_inputs, resolve_outputs


def ad_for(iwd, **attrs):
    return classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": "/bin/true",
                            "TransferExecutable": False, "Iwd": str(iwd), **attrs})


def test_fifo_input_is_refused_without_opening_it(tmp_path):
    os.mkfifo(tmp_path / "in.fifo")
    with pytest.raises(BadTransferPathError, match="not a regular file"):
        resolve_inputs(input_plan(ad_for(tmp_path, TransferInput="in.fifo")))


def test_device_input_is_refused(tmp_path):
    with pytest.raises(BadTransferPathError, match="not a regular file"):
        resolve_inputs(input_plan(ad_for(tmp_path, TransferInput="/dev/zero")))


def test_fifo_listed_as_output_is_refused(tmp_path):
    os.mkfifo(tmp_path / "out")
    plan = output_plan(ad_for(tmp_path, TransferOutput="out"))
    with pytest.raises(BadTransferPathError, match="not a regular file"):
        resolve_outputs(plan, str(tmp_path))


def test_size_limit_is_checked_before_the_file_is_read(tmp_path, monkeypatch):
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(50 * 1024 * 1024)  # sparse: 50 MiB claimed, nothing to read
    read = []
    monkeypatch.setattr("transfer.archive._digest", lambda path: read.append(path))
    stream = PackStream([PackItem(str(big), "big")], max_bytes=10 * 1024 * 1024, job="1.0")
    with pytest.raises(TransferLimitError, match="limit of 10485760"):
        b"".join(stream)
    assert read == []


def test_file_within_limit_still_packs(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 100)
    stream = PackStream([PackItem(str(tmp_path / "a"), "a")], max_bytes=1000, job="1.0")
    assert len(b"".join(stream)) > 100
