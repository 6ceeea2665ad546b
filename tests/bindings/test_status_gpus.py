"""roost status -gpus: a line per card from fixed slot ads, the jobs holding a piece of
it, and the GPU columns -compact adds when the pool has GPUs."""

import classad
from bindings.cli.status import parse_arguments, render
from bindings.cli.status_compact import compact_table
from bindings.cli.status_gpus import gpu_table
from tests.support.gpu_slot_ads import NOW, card, partitionable, pool


def test_a_line_per_card_with_its_jobs():
    """Each card shows memory and cores used and free, its shares and the jobs holding a piece of it."""
    lines = gpu_table(pool()).splitlines()
    assert lines[0].split() == ["Machine", "GPU", "DeviceName", "UsedMb", "FreeMb", "UsedCores", "FreeCores",
                                "Shares", "Jobs"]
    assert lines[2].split() == ["node1", "GPU-aaaa0001", "NVIDIA", "A100-SXM4-40GB", "20480", "20480", "60%",
                                "40%", "2", "12.0,12.1"]
    assert lines[3].split()[-6:] == ["40960", "0", "100%", "0%", "1", "13.0"]
    assert lines[4].split()[0] == "node2" and lines[4].split()[-2:] == ["0", "-"]
    assert lines[-1] == "3 GPUs (1 untouched), 3 shares, 3 jobs on them; 61440 of 122880 MB free"


def test_columns_line_up():
    """Numbers are right-aligned under their headings, names cut to their width without -wide."""
    long_name = partitionable("a-very-long-host-name.example.org", card("GPU-cccc0001", 0))
    table = gpu_table([long_name])
    heading, _, row = table.splitlines()[:3]
    assert row.startswith("a-very-long-host-n ")
    assert row.index("40960") + len("40960") == heading.index("FreeMb") + len("FreeMb")
    assert "a-very-long-host-name.example.org" in gpu_table([long_name], wide=True)


def test_no_cards_print_nothing():
    """A pool without GPUs prints no -gpus table."""
    assert gpu_table([classad.ClassAd({"Name": "slot1@x", "Machine": "x", "State": "Unclaimed"})]) == ""


def test_the_flag_restricts_the_query_and_picks_the_table():
    """-gpus asks only for slots with GPUs and prints the card table; -af still prints attributes."""
    request = parse_arguments(["-gpus"])
    assert "TotalSlotGPUs > 0" in request.constraint()
    assert render(request, pool(), NOW).startswith("Machine")
    assert render(parse_arguments(["-gpus", "-af", "Name"]), pool()[:1], NOW) == "slot1@node1\n"


def test_compact_adds_gpu_columns_only_with_gpus():
    """-compact shows untouched GPUs, shares and card memory free per machine when the pool has GPUs."""
    lines = compact_table(pool(), NOW).splitlines()
    assert lines[0].split()[-3:] == ["FreGpu", "GpuShr", "GpuFreeGb"]
    assert lines[2].split()[0] == "node1" and lines[2].split()[-3:] == ["0", "3", "20.0"]
    assert lines[3].split()[0] == "node2" and lines[3].split()[-3:] == ["1", "0", "40.0"]
    plain = classad.ClassAd({"Name": "slot1@x", "Machine": "x", "State": "Unclaimed", "Cpus": 1, "Memory": 1024})
    assert "FreGpu" not in compact_table([plain], NOW)
