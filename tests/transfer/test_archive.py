"""Tests for transfer.archive: real tar streams packed and unpacked on disk."""

import io
import os
import stat
import tarfile

import pytest

import classad
from transfer.archive import CHUNK_SIZE, PackStream, into_directory, into_iwd, pack, stream_of, unpack
from transfer.errors import TransferLimitError, UnsafeArchiveError
from transfer.plan import STDOUT_NAME, input_plan, output_plan
from transfer.resolve import PackItem, resolve_inputs, resolve_outputs


@pytest.fixture
def iwd(tmp_path):
    root = tmp_path / "iwd"
    (root / "d" / "sub").mkdir(parents=True)
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "a.txt").write_text("alpha")
    (root / "d" / "sub" / "f.bin").write_bytes(bytes(range(256)) * 10)
    return root


def input_items(iwd, **attrs):
    ad = classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Cmd": str(iwd / "run.sh"),
                          "Iwd": str(iwd), **attrs})
    return resolve_inputs(input_plan(ad))


def malicious(*members):
    """A tar stream holding hand-made members: (TarInfo, bytes or None)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def test_round_trip_into_a_sandbox_keeps_bytes_layout_and_executable_bit(iwd, tmp_path):
    """Packing then unpacking gives identical files; the executable stays executable."""
    box = tmp_path / "box"
    box.mkdir()
    stream = PackStream(input_items(iwd, TransferInput="a.txt,d"))
    stats = unpack(stream_of(stream), into_directory(str(box)))
    assert (box / "a.txt").read_text() == "alpha"
    assert (box / "d" / "sub" / "f.bin").read_bytes() == bytes(range(256)) * 10
    assert os.stat(box / "run.sh").st_mode & stat.S_IXUSR
    assert not os.stat(box / "a.txt").st_mode & stat.S_IXUSR
    assert (stats.files, stats.directories, stats.bytes) == (3, 2, 18 + 5 + 2560)
    assert stream.stats == stats
    assert not list(box.rglob("*.roost-part"))


def test_same_files_give_identical_streams(iwd):
    """The stream is deterministic: packing twice yields the same bytes."""
    items = input_items(iwd, TransferInput="a.txt,d/")
    first, second = io.BytesIO(), io.BytesIO()
    pack(items, first)
    pack(items, second)
    assert first.getvalue() == second.getvalue()
    with tarfile.open(fileobj=io.BytesIO(first.getvalue())) as archive:
        assert {m.uid for m in archive.getmembers()} == {0}


def test_large_file_streams_in_bounded_chunks(tmp_path):
    """An 8 MiB file is produced in chunks no bigger than CHUNK_SIZE."""
    big = tmp_path / "big"
    big.write_bytes(os.urandom(8 << 20))
    sizes = [len(chunk) for chunk in PackStream([PackItem(str(big), "big")])]
    assert max(sizes) <= CHUNK_SIZE and sum(sizes) > 8 << 20


def test_size_limit_stops_packing_and_unpacking(iwd, tmp_path):
    """More payload than max_bytes is a TransferLimitError on either side."""
    items = input_items(iwd, TransferInput="d")
    with pytest.raises(TransferLimitError, match="limit of 100 bytes") as caught:
        pack(items, io.BytesIO(), max_bytes=100, job="1.0")
    assert caught.value.hold_code == 32
    with pytest.raises(TransferLimitError):
        unpack(stream_of(PackStream(items)), into_directory(str(tmp_path)), max_bytes=100)
    with pytest.raises(TransferLimitError, match="more than 2 files"):
        unpack(stream_of(PackStream(items)), into_directory(str(tmp_path)), max_files=2)


@pytest.mark.parametrize("name", ["../evil", "/etc/evil", "a/../../evil", "./x"])
def test_members_that_escape_are_refused(tmp_path, name):
    """Absolute or climbing member names are refused and nothing is written outside."""
    info = tarfile.TarInfo(name)
    info.size = 4
    with pytest.raises(UnsafeArchiveError, match="escapes its destination"):
        unpack(malicious((info, b"evil")), into_directory(str(tmp_path / "box")), job="3.1")
    assert not (tmp_path / "evil").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.FIFOTYPE, tarfile.CHRTYPE])
def test_links_and_devices_are_refused(tmp_path, kind):
    """Symlinks, hard links and special files never get unpacked."""
    info = tarfile.TarInfo("x")
    info.type = kind
    info.linkname = "/etc/passwd"
    with pytest.raises(UnsafeArchiveError, match="only files and directories"):
        unpack(malicious((info, None)), into_directory(str(tmp_path)))
    assert not os.path.lexists(tmp_path / "x")


def test_existing_symlink_in_destination_is_not_followed(tmp_path):
    """A symlinked directory already in the sandbox cannot redirect a member elsewhere."""
    box, outside = tmp_path / "box", tmp_path / "outside"
    box.mkdir()
    outside.mkdir()
    (box / "d").symlink_to(outside)
    info = tarfile.TarInfo("d/planted")
    info.size = 1
    with pytest.raises(UnsafeArchiveError, match="not a directory"):
        unpack(malicious((info, b"x")), into_directory(str(box)))
    assert list(outside.iterdir()) == []


def test_file_replacing_a_symlink_replaces_the_link_not_its_target(tmp_path):
    """A member landing on an existing symlink replaces the link itself."""
    box = tmp_path / "box"
    box.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (box / "f").symlink_to(victim)
    info = tarfile.TarInfo("f")
    info.size = 3
    unpack(malicious((info, b"new")), into_directory(str(box)))
    assert victim.read_text() == "keep" and (box / "f").read_text() == "new"
    assert not (box / "f").is_symlink()


def test_damaged_member_fails_its_checksum(iwd, tmp_path):
    """Flipping a payload byte in transit is caught and the file is not left behind."""
    data = bytearray(b"".join(PackStream([PackItem(str(iwd / "a.txt"), "a.txt")])))
    at = data.index(b"alpha")
    data[at] = ord("A")
    box = tmp_path / "box"
    box.mkdir()
    with pytest.raises(UnsafeArchiveError, match="arrived damaged"):
        unpack(io.BytesIO(bytes(data)), into_directory(str(box)))
    assert list(box.iterdir()) == []


def test_truncated_stream_is_an_error(iwd, tmp_path):
    """A stream cut off mid-file is refused rather than leaving a short file."""
    data = b"".join(PackStream([PackItem(str(iwd / "d" / "sub" / "f.bin"), "f.bin")]))
    with pytest.raises(UnsafeArchiveError):
        unpack(io.BytesIO(data[:2000]), into_directory(str(tmp_path)))
    assert not (tmp_path / "f.bin").exists()


def test_outputs_land_in_iwd_with_remaps_and_stdout_path(tmp_path):
    """Outputs unpack into Iwd by the plan: remaps to subdirectories and absolute paths,
    stdout to Out; a URL target is staged for upload."""
    box, home, elsewhere, staging = (tmp_path / n for n in ("box", "home", "abs", "stage"))
    for d in (box, home, staging):
        d.mkdir()
    (box / "r.txt").write_text("result")
    (box / "x.dat").write_text("x")
    (box / "u.bin").write_text("up")
    (box / "res").mkdir()
    (box / "res" / "inner.txt").write_text("in")
    (box / STDOUT_NAME).write_text("hello\n")
    plan = output_plan(classad.ClassAd({
        "ClusterId": 1, "ProcId": 0, "Iwd": str(home), "Out": "logs/out.txt",
        "TransferOutput": "r.txt,x.dat,res,u.bin",
        "TransferOutputRemaps": f"r.txt = sub/dir/r2.txt; x.dat = {elsewhere}/e.dat; "
                                "u.bin = s3://bucket/u.bin"}))
    items = resolve_outputs(plan, str(box))
    stats = unpack(stream_of(PackStream(items)), into_iwd(plan, str(staging)))
    assert (home / "sub" / "dir" / "r2.txt").read_text() == "result"
    assert (elsewhere / "e.dat").read_text() == "x"
    assert (home / "res" / "inner.txt").read_text() == "in"
    assert (home / "logs" / "out.txt").read_text() == "hello\n"
    assert stats.uploads == ((str(staging / "u.bin"), "s3://bucket/u.bin"),)
    assert not (home / "u.bin").exists()


def test_members_the_plan_does_not_place_are_skipped(tmp_path):
    """A stdout member for a job whose Out is /dev/null is read past, not written."""
    box, home = tmp_path / "box", tmp_path / "home"
    box.mkdir()
    home.mkdir()
    (box / STDOUT_NAME).write_text("unwanted")
    (box / "keep.txt").write_text("k")
    items = [PackItem(str(box / STDOUT_NAME), STDOUT_NAME), PackItem(str(box / "keep.txt"), "keep.txt")]
    plan = output_plan(classad.ClassAd({"ClusterId": 1, "ProcId": 0, "Iwd": str(home),
                                        "Out": "/dev/null"}))
    stats = unpack(stream_of(PackStream(items)), into_iwd(plan))
    assert sorted(os.listdir(home)) == ["keep.txt"] and stats.files == 1
