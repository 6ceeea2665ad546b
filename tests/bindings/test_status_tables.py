"""The human-readable tables of roost status, laid out column for column as condor_status
(ppSetStartdNormalCols and startdCompact_PrintFormat in src/condor_status.V6/status.cpp,
TrackTotals::displayTotals and StartdNormalTotal in totals.cpp)."""

import classad
from bindings.cli.status_compact import compact_table
from bindings.cli.status_tables import daemon_table, duration, slot_table, slot_totals

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
    """totals.cpp: the key column at least 14 wide, then Total %6d, Owner %5d, Claimed %7d,
    Unclaimed %9d, Matched %7d, Preempting %10d, Drain %6d, Backfill %8d, BkIdle %6d; a
    blank line after the heading and before the Total row."""
    ads = [slot("slot1@a", "Claimed", "Busy"), slot("slot2@a"), slot("slot3@a", "Owner"),
           slot("slot1@b", "Drained", "Retiring")]
    assert slot_totals(ads).splitlines() == [
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle",
        "",
        "  X86_64/LINUX     4     1       1         1       0          0      1        0      0",
        "",
        "         Total     4     1       1         1       0          0      1        0      0",
    ]


def test_totals_key_column_grows_and_malformed_ads_are_noted():
    """displayTotals: a key longer than 14 widens the column (with -wide it may be as narrow
    as 5); an ad without Arch/OpSys is left out and noted as malformed."""
    ads = [slot("slot1@a", OpSys="LINUX-WITH-A-LONG-NAME"), classad.ClassAd({"Name": "x", "State": "Owner"})]
    lines = slot_totals(ads).splitlines()
    assert lines[2].startswith("X86_64/LINUX-WITH-A-LONG-NAME     1     0") and lines[4].startswith(
        "                        Total     1")
    assert lines[6] == " " * 29 + "(Omitted 1 malformed ads in computed attribute totals)"
    assert slot_totals([slot("slot1@a")], wide=True).splitlines()[2].startswith("X86_64/LINUX     1")


def test_idle_backfill_slots_count_as_bkidle_not_in_the_total():
    """StartdNormalTotal::update: an unclaimed backfill slot is BkIdle and not in Total; a
    claimed one counts as Backfill."""
    ads = [slot("slot1@a", SlotBackfill=True), slot("slot2@a", "Claimed", "Busy", SlotBackfill=True)]
    assert slot_totals(ads).splitlines()[-1].split() == ["Total", "1", "0", "0", "0", "0", "0", "0", "1", "1"]


def test_memory_column_widens_to_its_widest_value():
    """Mem is %4d without truncation: a bigger value widens the column for every row."""
    lines = slot_table([slot("slot1@a", memory=2063937), slot("slot2@a", memory=679)], NOW).splitlines()
    assert lines[0] == "Name               OpSys      Arch   State     Activity LoadAv Mem      ActvtyTime"
    assert lines[2].endswith(" 0.000 2063937  1+03:38:58") and lines[3].endswith(" 0.000     679  1+03:38:58")


def test_wide_names_are_at_least_34_wide_and_the_time_is_activitytime():
    """ppSetStartdNormalCols with -wide: Name -34 untruncated, the last column ActivityTime in 12."""
    lines = slot_table([slot("slot1@vulture.cs.wisc.edu")], NOW, wide=True).splitlines()
    assert lines[0] == "Name" + " " * 31 + "OpSys      Arch   State     Activity LoadAv Mem  ActivityTime"
    assert lines[2] == "slot1@vulture.cs.wisc.edu" + " " * 10 + \
        "LINUX      X86_64 Unclaimed Idle      0.000  679   1+03:38:58"


def test_no_ads_print_nothing():
    """An empty answer prints no table, as condor_status prints none."""
    assert slot_table([], NOW) == "" and compact_table([], NOW) == ""


def test_compact_sums_a_partitionable_machine_on_one_line():
    """startdCompact_PrintFormat: one machine with its dynamic slots, cpus, gpus, TotalGb
    %8.2f, free cpus, FreeGb %8.2f, load per cpu %7.2f, the consensus state, Jobs/Min (_ when
    unknown) and the biggest dynamic slot in GB."""
    ads = [slot("slot1@host", memory=2048, PartitionableSlot=True, Cpus=2, TotalSlotCpus=8, TotalSlotMemory=8192),
           slot("slot1_1@host", "Claimed", "Busy", 1.0, 3072, SlotType="Dynamic", Cpus=3),
           slot("slot1_2@host", "Claimed", "Busy", 1.0, 3072, SlotType="Dynamic", Cpus=3)]
    lines = compact_table(ads, NOW).splitlines()
    assert lines[0] == "Machine Platform  Slots Cpus Gpus  TotalGb FreCpu  FreeGb  CpuLoad ST Jobs/Min MaxSlotGb"
    assert lines[2] == "host    x64/LINUX     2    8    0     8.00      2     2.00    0.25 Cb        _      3.00"


def test_compact_totals_count_the_children_and_a_partitionable_slot_with_room():
    """status.cpp totalize_row for -compact: the dynamic slots' states under the row's
    platform, and the partitionable slot's own state only while it is not exhausted."""
    room = [slot("slot1@host", PartitionableSlot=True, Cpus=2, Memory=2048),
            slot("slot1_1@host", "Claimed", "Busy", SlotType="Dynamic", Cpus=6)]
    full = [slot("slot1@full", PartitionableSlot=True, Cpus=0, Memory=0),
            slot("slot1_1@full", "Claimed", "Busy", SlotType="Dynamic", Cpus=8)]
    lines = compact_table(room + full, NOW).splitlines()
    assert lines[-3].split() == ["x64/LINUX", "3", "0", "2", "1", "0", "0", "0", "0", "0"]
    assert lines[-1].split() == ["Total", "3", "0", "2", "1", "0", "0", "0", "0", "0"]


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


def test_schedd_totals_are_one_blank_key_and_the_total_row():
    """scheddNormal_PrintFormat and ScheddNormalTotal: Name and Machine as wide as their
    values, RunningJobs %11d, IdleJobs and HeldJobs %10d; the totals headed
    TotalRunningJobs/TotalIdleJobs/TotalHeldJobs %18d, the blank key's row printing no counts."""
    ads = [classad.ClassAd({"Name": "schedd@a", "Machine": "a", "TotalRunningJobs": 2, "TotalIdleJobs": 5,
                            "TotalHeldJobs": 1})]
    assert daemon_table("Scheduler", ads, NOW).splitlines() == [
        "Name     Machine RunningJobs   IdleJobs   HeldJobs",
        "",
        "schedd@a a                 2          5          1",
        "",
        "                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs",
        "",
        " " * 14,
        "         Total                 2                  5                  1",
    ]


def test_submitter_totals_have_a_row_per_submitter():
    """ScheddSubmittorTotal: a row per submitter Name (the key column as wide as the longest
    name), RunningJobs %11d, IdleJobs and HeldJobs %10d, then the Total row."""
    ads = [classad.ClassAd({"Name": "bob@x.org", "Machine": "b", "RunningJobs": 1, "IdleJobs": 0, "HeldJobs": 0}),
           classad.ClassAd({"Name": "alice@x.org", "Machine": "a", "RunningJobs": 2, "IdleJobs": 5, "HeldJobs": 1})]
    assert daemon_table("Submitter", ads, NOW).splitlines()[-6:] == [
        "           RunningJobs   IdleJobs   HeldJobs",
        "",
        "alice@x.org          2          5          1",
        "  bob@x.org          1          0          0",
        "",
        "      Total          3          5          1",
    ]


def test_any_table_cuts_names_at_41_unless_wide():
    """printAnyNormal: MyType and TargetType in 18, Name %-41.41s (whole with -wide)."""
    ad = classad.ClassAd({"MyType": "Machine", "TargetType": "Job", "Name": "slot1@" + "n" * 50})
    assert daemon_table("Any", [ad], NOW).splitlines()[2] == "Machine            Job                slot1@" + "n" * 35
    assert ("n" * 50) in daemon_table("Any", [ad], NOW, wide=True)
