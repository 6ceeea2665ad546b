"""The job analysis behind `roost q -analyze`: clauses counted against slots, the
slots' own Requirements, and the report's wording for each kind of outcome."""

from __future__ import annotations

import classad
from bindings.analyze import analyze_job, conjuncts, render_analysis
from classad.parser import parse_expression
from classad.unparse import unparse_expr

JOB = ('[ClusterId = 7; ProcId = 2; JobStatus = 1; Owner = "alice"; DiskUsage = 10; RequestDisk = DiskUsage;'
       ' RequestMemory = 4096; Requirements = (TARGET.OpSys == "LINUX") && (TARGET.Memory >= RequestMemory)'
       ' && (TARGET.Disk >= RequestDisk)]')


def slot(memory: int, start: str = "true", opsys: str = "LINUX") -> classad.ClassAd:
    return classad.ClassAd(f'[OpSys = "{opsys}"; Memory = {memory}; Disk = 1000; Start = {start};'
                           f' Requirements = START]')


def test_conjuncts_split_top_level_ands_only():
    node = parse_expression("(a && b) && (c || d && e) && f")
    assert [unparse_expr(part) for part in conjuncts(node)] == ["a", "b", "(c || d && e)", "f"]
    assert [unparse_expr(part) for part in conjuncts(parse_expression("x || y"))] == ["x || y"]


def test_each_clause_counts_the_slots_it_accepts():
    analysis = analyze_job(classad.ClassAd(JOB), [slot(1024), slot(8192), slot(8192, opsys="WINDOWS")])
    assert [(c.text, c.matched) for c in analysis.clauses] == [
        ('TARGET.OpSys == "LINUX"', 2), ("TARGET.Memory >= RequestMemory", 2), ("TARGET.Disk >= RequestDisk", 3)]
    assert (analysis.slots, analysis.rejected_by_job, analysis.matching) == (3, 2, 1)
    assert analysis.defined == (("RequestMemory", "4096"), ("RequestDisk", "DiskUsage"), ("DiskUsage", "10"))


def test_a_clause_no_slot_meets_is_named():
    text = render_analysis(analyze_job(classad.ClassAd(JOB), [slot(1024), slot(2048)]))
    assert "The Requirements expression for job 7.2 is" in text
    assert "[1]           0  TARGET.Memory >= RequestMemory   <- no slot satisfies this" in text
    assert "No slot satisfies: TARGET.Memory >= RequestMemory" in text
    assert "0 slots match all of job 7.2's Requirements" in text


def test_slots_whose_own_requirements_refuse_the_job_are_counted_apart():
    analysis = analyze_job(classad.ClassAd(JOB), [slot(8192, start='TARGET.Owner == "bob"'), slot(8192)])
    assert (analysis.rejected_by_job, analysis.rejecting_job, analysis.matching) == (0, 1, 1)
    assert "can run on 1 slot(s)" in render_analysis(analysis)


def test_clauses_met_apart_but_never_together():
    analysis = analyze_job(classad.ClassAd(JOB), [slot(8192, opsys="WINDOWS"), slot(1024)])
    assert analysis.failing == ()
    assert "no slot meets them all together" in render_analysis(analysis)


def test_the_short_form_has_no_clause_table():
    text = render_analysis(analyze_job(classad.ClassAd(JOB), [slot(1024)]), better=False)
    assert "Step" not in text and "1 are rejected by the job's Requirements" in text


def test_a_held_job_is_not_analyzed_but_its_reason_is_shown():
    job = classad.ClassAd(JOB)
    job["JobStatus"] = 5
    job["HoldReason"] = "input file absent.txt is missing"
    text = render_analysis(analyze_job(job, [slot(8192)]))
    assert "Job 7.2 is held, not idle" in text and "Hold reason: input file absent.txt is missing" in text


def test_an_empty_pool_says_so():
    assert "No slots are in the pool" in render_analysis(analyze_job(classad.ClassAd(JOB), []))
