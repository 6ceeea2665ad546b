"""The human-readable tables of roost status, laid out column for column as condor_status."""

import classad
from bindings.cli.status_tables import compact_table, daemon_table, duration, slot_table, slot_totals

NOW = 1_000_000


def slot(name, state="Unclaimed", activity="Idle", load=0.0, memory=679, age=99538, **extra):
    return classad.ClassAd({"Name": name, "Machine": name.split("@")[1], "OpSys": "LINUX", "Arch": "X86_64",
                            "State": state, "Activity": activity, "LoadAvg": load, "Memory": memory,
                            "EnteredCurrentActivity": NOW - age, **extra})


def test_slot_rows_line_up_with_condor_status():
    """A slot row has condor_status's widths: 18-wide truncated name, %6.3f load, D+HH:MM:SS."""
    table = slot_table([slot("slot1@vulture.cs.wisc.edu")], NOW)
    lines = table.splitlines()
    assert lines[0] == "Name               OpSys      Arch   State     Activity LoadAv Mem   ActvtyTime"
    assert lines[1] == ""
    assert lines[2] == "slot1@vulture.cs.w LINUX      X86_64 Unclaimed Idle      0.000  679  1+03:38:58"


def test_wide_keeps_the_whole_name():
    """-wide does not truncate names."""
    assert "slot1@vulture.cs.wisc.edu" in slot_table([slot("slot1@vulture.cs.wisc.edu")], NOW, wide=True)


def test_totals_count_slots_per_platform_and_state():
    """The totals block counts slots by state for each Arch/OpSys and overall."""
    ads = [slot("slot1@a", "Claimed", "Busy"), slot("slot2@a"), slot("slot3@a", "Owner"),
           slot("slot1@b", "Drained", "Retiring")]
    lines = slot_totals(ads).splitlines()
    assert lines[0] == "                         Machines Owner Claimed Unclaimed Matched Preempting  Drain"
    assert lines[2] == "            X86_64/LINUX        4     1       1         1       0          0      1"
    assert lines[4] == "                   Total        4     1       1         1       0          0      1"


def test_no_ads_print_nothing():
    """An empty answer prints no table, as condor_status prints none."""
    assert slot_table([], NOW) == "" and compact_table([], NOW) == ""


def test_compact_sums_a_partitionable_machine_on_one_line():
    """-compact shows one machine: its dynamic slots, cpus, free cpus and memory, and consensus state."""
    ads = [slot("slot1@host", memory=2048, PartitionableSlot=True, Cpus=2, TotalSlotCpus=8, TotalSlotMemory=8192),
           slot("slot1_1@host", "Claimed", "Busy", 1.0, 3072, SlotType="Dynamic", Cpus=3),
           slot("slot1_2@host", "Claimed", "Busy", 1.0, 3072, SlotType="Dynamic", Cpus=3)]
    row = compact_table(ads, NOW).splitlines()[2].split()
    assert row[:5] == ["host", "x64/LINUX", "2", "8", "0"]
    assert row[5:8] == ["8", "2", "2"]
    assert row[9] == "Cb" and row[11] == "3"


def test_schedd_table_has_job_columns_and_totals():
    """-schedd lists running, idle and held jobs per schedd and their totals."""
    ads = [classad.ClassAd({"Name": "schedd@a", "Machine": "a", "TotalRunningJobs": 2, "TotalIdleJobs": 5,
                            "TotalHeldJobs": 1}),
           classad.ClassAd({"Name": "schedd@b", "Machine": "b", "TotalRunningJobs": 1, "TotalIdleJobs": 0,
                            "TotalHeldJobs": 0})]
    lines = daemon_table("Scheduler", ads, NOW).splitlines()
    assert lines[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"]
    assert lines[2].split() == ["schedd@a", "a", "2", "5", "1"]
    assert lines[-1].split() == ["Total", "3", "5", "1"]


def test_durations_read_as_days_and_clock_time():
    """Durations print as D+HH:MM:SS."""
    assert duration(0) == "0+00:00:00" and duration(90061) == "1+01:01:01"


def test_master_table_lists_each_hosts_address_and_daemons():
    """-master shows one line per host: its master's name, machine, address and DAEMON_LIST."""
    ads = [classad.ClassAd({"Name": "master@cm", "Machine": "cm", "MyAddress": "<198.18.0.2:40001>",
                            "DaemonList": "MASTER, COLLECTOR, NEGOTIATOR"}),
           classad.ClassAd({"Name": "master@exec1", "Machine": "exec1", "MyAddress": "<198.18.0.4:40002>",
                            "DaemonList": "MASTER, STARTD"})]
    lines = daemon_table("DaemonMaster", ads, NOW).splitlines()
    assert lines[0].split() == ["Name", "Machine", "Address", "Daemons"]
    assert lines[2].split() == ["master@cm", "cm", "<198.18.0.2:40001>", "MASTER,", "COLLECTOR,", "NEGOTIATOR"]
    assert lines[3].split()[-2:] == ["MASTER,", "STARTD"]
