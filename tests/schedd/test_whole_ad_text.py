"""``WholeAdText`` writes the line ``job_line`` writes for a whole ad, from what it remembers too."""

from __future__ import annotations

from schedd.queue.answers import WireText, job_line
from schedd.queue.whole_ad_text import WholeAdText


def test_lines_are_job_lines_first_and_remembered():
    """The same text as job_line for the same pairs, procs overriding, removing and adding
    attributes, names of every length and case, the second time from the remembered parts."""
    cluster = {"cmd": ("Cmd", '"/bin/\u00e9"'), "zz": ("ZZ", "1"), "a": ("a", "MY.x + 1"),
               "owner": ("Owner", '"alice"'), "requirements": ("Requirements", "TARGET.Cpus >= 1")}
    procs = [[["ProcId", "0"], ["GlobalJobId", '"s#1.0#5"']],
             [["ProcId", "1"], ["zz", "2"], ["A", None], ["Extra", '{ 1,"two" }']],
             []]
    whole = WholeAdText(WireText())
    for proc in procs * 2:
        assert whole.line(cluster, proc) == job_line(cluster, proc, None, WireText())
