"""The submit and edit routes as an attacker with a WRITE token would use them (in
memory, real tokens): no command run and no file read for a client, counts refused
before expansion, attribute names checked, and the attributes only the schedd sets
never taken from a client."""

from __future__ import annotations

import socket
import time

import pytest

from schedd.submit.clientside import measured_sizes
from schedd.submit.jobad import file_kib
from tests.schedd.test_service import call, schedd, submit  # noqa: F401 (fixtures)

SECRET = "DAEMON-TOKEN-0123456789abcdef"


@pytest.fixture
def pool_dir(tmp_path):
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "daemon").write_text(SECRET + "\n")
    return tmp_path


def _refused(response, *needles):
    assert response.status == 400, response.json()
    message = response.json()["message"]
    for needle in needles:
        assert needle in message, message
    assert SECRET not in message
    return message


def test_queue_from_a_command_runs_nothing_in_the_schedd(call, pool_dir):
    """`queue x from /usr/bin/touch MARKER |` is a 400 naming the line; MARKER never appears."""
    marker = pool_dir / "pwned"
    text = f"executable = /bin/true\narguments = $(x)\nqueue x from /usr/bin/touch {marker} |\n"
    _refused(submit(call, pool_dir, text), "line 3", "runs a command", "roost submit")
    assert not marker.exists()


@pytest.mark.parametrize("text, effect", [
    ("executable = /bin/true\narguments = $(t)\nqueue t from tokens/daemon\n", "reads a file"),
    ("executable = /bin/true\ninclude : tokens/daemon\nqueue\n", "reads a file"),
    ("executable = /bin/true\narguments = $(f)\nqueue f matching tokens/*\n", "lists files"),
    ("executable = /bin/true\narguments = $ENV(HOME)\nqueue\n", "reads the environment"),
])
def test_files_and_environment_of_the_schedd_stay_unread(call, pool_dir, text, effect):
    """Item files, includes, globs and $ENV are refused; the token never reaches a message or an ad."""
    _refused(submit(call, pool_dir, text, environ={"HOME": "/home/alice"}), effect)
    assert call("/v1/jobs/query", {}).lines() == []


def test_a_million_and_a_half_procs_are_refused_at_once(call, tmp_path):
    """`queue 1500000` is a 400 before any proc is made (8 s and 226 MiB before)."""
    started = time.monotonic()
    _refused(submit(call, tmp_path, "executable = /bin/true\nqueue 1500000\n"), "line 2", "more than the 1000000")
    assert time.monotonic() - started < 2.0


def test_an_empty_item_list_submits_nothing(call, tmp_path):
    _refused(submit(call, tmp_path, "executable = /bin/true\nqueue\n", itemdata=[]), "$.itemdata", "empty")
    assert call("/v1/jobs/query", {}).lines() == []


def test_a_huge_integer_is_a_400_naming_the_line(call, tmp_path):
    _refused(submit(call, tmp_path, f"executable = /bin/true\nrequest_cpus = {'9' * 5000}\nqueue\n"),
             "line 2", "too long")


@pytest.mark.parametrize("body", [
    {"cluster_ad": {"Cmd": "/bin/true", "Zzz = 0\nOwner": "mallory"}, "proc_ads": [{}]},
    {"cluster_ad": {"Cmd": "/bin/true"}, "proc_ads": [{}, {"a b": 1}]},
])
def test_an_ad_with_a_name_that_is_not_an_identifier_is_refused(call, body):
    name = next(name for ad in [body["cluster_ad"], *body["proc_ads"]] for name in ad if " " in name)
    _refused(call("/v1/jobs", body), repr(name), "not an attribute name")
    assert call("/v1/jobs/query", {}).lines() == []


def test_attributes_only_the_schedd_sets_are_never_taken_from_a_submitted_ad(call):
    """A cluster ad's User, Owner, ClusterId, QDate and GlobalJobId, and a proc's ProcId, are replaced."""
    body = {"cluster_ad": {"Cmd": "/bin/true", "User": "mallory@pool", "Owner": "mallory", "ClusterId": 77,
                           "QDate": 1, "GlobalJobId": "forged#77.0#1", "JobStatus": 1,
                           "UidDomain": "victim.example"},
            "proc_ads": [{"ProcId": 9, "ClusterId": 78, "User": "mallory@pool"}]}
    response = call("/v1/jobs", body)
    assert response.status == 200, response.json()
    cluster = response.json()["cluster"]
    [ad] = call("/v1/jobs/query", {"projection": ["ClusterId", "ProcId", "User", "Owner", "QDate",
                                                  "GlobalJobId", "UidDomain"]}).lines()
    assert (ad["ClusterId"], ad["ProcId"], ad["User"], ad["Owner"]) == (cluster, 0, "alice@pool", "alice")
    assert ad["QDate"] > 1
    assert ad["GlobalJobId"] == f"{socket.gethostname()}#{cluster}.0#{ad['QDate']}"
    assert ad["UidDomain"] not in ("victim.example", None)


def test_a_description_cannot_set_user_or_cluster_id(call, tmp_path):
    text = '+User = "mallory@pool"\n+ClusterId = 99\n+QDate = 1\nexecutable = /bin/true\nqueue 2\n'
    response = submit(call, tmp_path, text)
    assert response.status == 200, response.json()
    ads = call("/v1/jobs/query", {"projection": ["ClusterId", "ProcId", "User", "QDate"]}).lines()
    assert [(ad["ClusterId"], ad["ProcId"], ad["User"]) for ad in ads] == [(1, 0, "alice@pool"), (1, 1, "alice@pool")]
    assert all(ad["QDate"] > 1 for ad in ads)


def test_edit_refuses_a_name_that_is_not_an_identifier(call, tmp_path):
    """`attr = "Zzz = 0\\nOwner"` no longer forges a second Owner line."""
    submit(call, tmp_path, "executable = /bin/true\nqueue\n")
    response = call("/v1/jobs/edit", {"ids": ["1.0"], "attr": "Zzz = 0\nOwner", "value": '"mallory"'})
    _refused(response, "'Zzz = 0\\nOwner'", "not an attribute name")
    [ad] = call("/v1/jobs/query", {"projection": ["Owner"]}).lines()
    assert ad == {"Owner": "alice"}


@pytest.mark.parametrize("attr", ["User", "ClusterId", "ProcId", "Owner", "QDate", "GlobalJobId", "UidDomain"])
def test_edit_refuses_the_attributes_the_schedd_sets(call, tmp_path, attr):
    submit(call, tmp_path, "executable = /bin/true\nqueue\n")
    response = call("/v1/jobs/edit", {"ids": ["1.0"], "attr": attr, "value": "1"})
    assert response.status == 403 and "protected" in response.json()["message"]


def test_sizes_come_from_what_the_client_measured_never_from_the_schedds_files(call, tmp_path):
    """The schedd does not stat its own files for a client: ExecutableSize, ImageSize and
    DiskUsage come from the sizes the client measured (condor_submit's own job)."""
    program, data = tmp_path / "prog", tmp_path / "data.bin"
    program.write_bytes(b"x" * 5000)
    data.write_bytes(b"y" * 3000)
    text = "executable = prog\ntransfer_input_files = data.bin\nqueue\n"
    submit(call, tmp_path, text)
    sizes = measured_sizes(text, cwd=str(tmp_path), environ={})
    assert sizes == {str(program): 5, str(data): 3}
    submit(call, tmp_path, text, file_sizes=sizes)
    ads = call("/v1/jobs/query", {"projection": ["ExecutableSize", "ImageSize", "DiskUsage"]}).lines()
    assert [(ad["ExecutableSize"], ad["ImageSize"], ad["DiskUsage"]) for ad in ads] == [(0, 0, 0), (5, 5, 8)]


def test_per_proc_file_names_are_not_measured():
    text = "executable = /bin/true\ntransfer_input_files = in_$(Process).txt, $(x)\nqueue x in (a, b)\n"
    assert measured_sizes(text, cwd="/", environ={}) == {"/bin/true": file_kib("/bin/true")}


@pytest.mark.parametrize("sizes", [{"relative/path": 1}, {"/abs": -1}, {"/abs": "big"}, ["/abs"],
                                   {f"/f{i}": 1 for i in range(1001)}])
def test_bad_file_sizes_are_refused(call, tmp_path, sizes):
    _refused(submit(call, tmp_path, "executable = /bin/true\nqueue\n", file_sizes=sizes), "$.file_sizes")
