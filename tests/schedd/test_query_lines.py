"""The schedd's query answer built from stored text (``JobQueue.query_lines``) is the
wire form of the ads ``JobQueue.query`` gives, whether the constraint is decided on a
few literal attributes or on the whole ad."""

import pytest

from classad import ClassAd, ExprTree
from daemoncore.wire.adcodec import ad_to_json
from daemoncore.wire.ndjson import encode_line
from schedd.queue import JobSelection
from schedd.queue.screen import screened_names

CONSTRAINTS = [
    "true", "ProcId >= 3", "JobStatus == 1 && ProcId >= 0", 'Owner == "alice"', 'owner =?= "ALICE"',
    "Arg > 10", "Arg =?= undefined", "NoSuch == 1", "RequestMemory > 100", "Rate > 1", "Flag",
    'eval("Arg") > 5', "MY.Arg < 4", "size(Name) > 3", "Requirements", "Flag || Arg == 2",
    'regexp("^/bin/y", Cmd)', "Arg > 2 ? true : false", "[a = Arg].a == 4",
]
PROJECTIONS = [[], ["ProcId", "RequestMemory", "Cmd", "Nope"], ["ClusterId", "ProcId", "Owner"], ["Flag", "Name"]]


@pytest.fixture
def varied(queue):
    """Two clusters whose procs override, remove and edit attributes of every kind."""
    common = ClassAd({"Owner": "alice", "Cmd": "/bin/x", "RequestMemory": 64, "Rate": 1.5, "Lst": [1, "a"],
                      "Name": 'h\u00e9llo "q"', "Big": 2**62, "Flag": False})
    common.set_expr("Requirements", ExprTree('TARGET.Memory >= MY.RequestMemory && Arch == "X86_64"').node)
    procs = [ClassAd({"Arg": i, "cmd": "/bin/y" if i % 3 == 0 else "/bin/x"}) for i in range(12)]
    procs[4]["Flag"] = True
    queue.submit_cluster(common, procs)
    queue.submit_cluster(ClassAd({"Owner": "bob"}), [ClassAd({"Flag": True}), ClassAd({})])
    queue.edit(JobSelection.from_spec(["1.1"]), "RequestMemory", "RequestMemory * 2")
    queue.edit(JobSelection.from_spec(["1.2"]), "requestmemory", "undefined")
    queue.edit(JobSelection.from_spec(["1.3"]), "Arg", "ProcId + 20")
    return queue


@pytest.mark.parametrize("constraint", CONSTRAINTS)
@pytest.mark.parametrize("projection", PROJECTIONS)
def test_query_lines_are_the_wire_form_of_query(varied, constraint, projection):
    """Each constraint and projection answers the same lines both ways."""
    expected = _projected(varied, constraint, projection)
    assert b"".join(block for block in varied.query_lines(constraint, projection) if block) == expected


def _projected(queue, constraint, projection):
    """The lines of ``query``'s whole ads cut to ``projection``, names spelled as stored."""
    wanted = {name.lower() for name in projection}
    lines = []
    for ad in queue.query(constraint):
        if projection:
            ad = ClassAd.from_entries([(name, ad.expression(name)) for name in ad if name.lower() in wanted])
        lines.append(encode_line(ad_to_json(ad)))
    return b"".join(lines)


def test_query_lines_stop_at_the_limit(varied):
    """A limit of 3 answers the first three jobs."""
    answer = b"".join(block for block in varied.query_lines("true", ["ProcId"], 3) if block)
    assert answer == b'{"ProcId":0}\n{"ProcId":1}\n{"ProcId":2}\n'


def test_screen_names_what_a_constraint_reads():
    """Plain references (scoped or not) are screened names; eval() reads any attribute."""
    assert screened_names("JobStatus == 1 && MY.ProcId >= 0") == frozenset({"jobstatus", "my", "procid"})
    assert screened_names('eval("Arg") > 5') is None
    assert screened_names("unparse(Requirements) == \"x\"") is None


def test_job_wire_is_the_wire_form_of_the_job_ad(varied):
    """A job's wire form read off its stored text is ad_to_json of its ad."""
    from jobmodel.states import JobId
    for job_id in (JobId(1, 0), JobId(1, 2), JobId(2, 1)):
        assert varied.job_wire(job_id) == ad_to_json(varied.get_job(job_id))


def test_only_a_constraint_calling_no_function_is_decided_once_for_procs_alike():
    """A call (random(), time()) may answer differently for two jobs alike; a plain comparison may not."""
    from schedd.queue.screen import has_no_call
    assert has_no_call('Owner == "alice" && JobStatus == 1')
    assert not has_no_call('random() < 0.5 && Owner == "alice"')
    assert not has_no_call("time() > QDate")
    assert not has_no_call('eval("Owner") == "alice"')
