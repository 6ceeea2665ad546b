"""Tests for transfer.inline: which transfer steps run without a thread."""

import classad
from transfer.inline import INLINE_BYTES, input_send_is_light, outputs_go_to_urls, sandbox_is_small, stream_is_small
from transfer.plan import input_plan, output_plan


def job(iwd, **attrs):
    return classad.ClassAd({"ClusterId": 3, "ProcId": 0, "Iwd": str(iwd), "Cmd": "/bin/true",
                            "TransferExecutable": False, **attrs})


def test_files_alone_are_planned_inline_but_directories_and_urls_are_not(tmp_path):
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "tree").mkdir()
    assert input_send_is_light(input_plan(job(tmp_path, TransferInput="a.txt")))
    assert not input_send_is_light(input_plan(job(tmp_path, TransferInput="a.txt, tree")))
    assert not input_send_is_light(input_plan(job(tmp_path, TransferInput="https://example.org/x.dat")))


def test_small_streams_unpack_inline_unless_a_url_follows(tmp_path):
    plain = output_plan(job(tmp_path))
    assert stream_is_small(INLINE_BYTES, plain)
    assert not stream_is_small(INLINE_BYTES + 1, plain)
    to_s3 = output_plan(job(tmp_path, TransferOutputRemaps='"out.dat = s3://bucket/out.dat"'))
    assert outputs_go_to_urls(to_s3) and not stream_is_small(10, to_s3)
    assert outputs_go_to_urls(output_plan(job(tmp_path, OutputDestination="https://example.org/up/")))
    assert not stream_is_small(10, input_plan(job(tmp_path, TransferInput="https://example.org/x.dat")))


def test_a_sandbox_of_a_few_small_files_packs_inline(tmp_path):
    plain = output_plan(job(tmp_path))
    (tmp_path / "out.txt").write_bytes(b"x" * 1000)
    assert sandbox_is_small(str(tmp_path), plain)
    (tmp_path / "big.dat").write_bytes(b"x" * INLINE_BYTES)
    assert not sandbox_is_small(str(tmp_path), plain)


def test_a_sandbox_with_a_directory_or_gone_packs_in_the_thread_pool(tmp_path):
    plain = output_plan(job(tmp_path))
    (tmp_path / "sub").mkdir()
    assert not sandbox_is_small(str(tmp_path), plain)
    assert not sandbox_is_small(str(tmp_path / "missing"), plain)
