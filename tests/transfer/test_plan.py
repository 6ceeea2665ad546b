"""Tests for transfer.plan: input and output plans read from job ads."""

import pytest

import classad
from transfer.errors import BadTransferPathError
from transfer.plan import (
    STDERR_NAME,
    STDOUT_NAME,
    InputFile,
    OutputFile,
    UrlInput,
    input_plan,
    output_plan,
    parse_remaps,
)


def job(**attrs):
    base = {"ClusterId": 7, "ProcId": 2, "Cmd": "/home/u/run.sh", "Iwd": "/home/u/work"}
    base.update(attrs)
    return classad.ClassAd({k: v for k, v in base.items() if v is not None})


def test_executable_and_stdin_travel_under_their_base_names():
    """Cmd and In are sent as base names; a relative In is under Iwd."""
    plan = input_plan(job(In="data/in.txt"))
    assert plan.files == (InputFile("/home/u/run.sh", "run.sh"),
                          InputFile("/home/u/work/data/in.txt", "in.txt"))
    assert plan.executable == "run.sh" and plan.stdin == "in.txt"


def test_executable_not_sent_when_transfer_executable_is_false():
    """TransferExecutable = false leaves Cmd on the execute side as written."""
    plan = input_plan(job(TransferExecutable=False))
    assert plan.files == () and plan.executable is None


def test_dev_null_and_streamed_stdin_are_not_sent():
    """In = /dev/null or StreamIn = true sends no stdin file."""
    assert input_plan(job(In="/dev/null")).stdin is None
    assert input_plan(job(In="x", StreamIn=True)).stdin is None


def test_transfer_input_files_directories_and_urls():
    """Files land under base names, 'dir/' sends contents, absolute paths stay, URLs split off."""
    plan = input_plan(job(TransferInput="a.txt, sub/b.txt,d/,/abs/e,http://h/p/x.tgz?y=1,"
                                        "s3://bkt/k/model.bin"))
    assert plan.files[1:] == (
        InputFile("/home/u/work/a.txt", "a.txt"),
        InputFile("/home/u/work/sub/b.txt", "b.txt"),
        InputFile("/home/u/work/d", "", contents_only=True),
        InputFile("/abs/e", "e"))
    assert plan.urls == (UrlInput("http://h/p/x.tgz?y=1", "x.tgz"),
                         UrlInput("s3://bkt/k/model.bin", "model.bin"))
    assert plan.schemes == {"http", "s3"}


def test_preserve_relative_paths_keeps_the_relative_name():
    """With PreserveRelativePaths the sandbox name is the path as written."""
    plan = input_plan(job(TransferInput="sub/dir/b.txt,x/", PreserveRelativePaths=True))
    assert [f.name for f in plan.files[1:]] == ["sub/dir/b.txt", "x"]


def test_relative_preserved_path_cannot_climb_out():
    """A preserved relative name with '..' is refused, naming the job and entry."""
    with pytest.raises(BadTransferPathError, match=r"job 7\.2: TransferInput names '\.\./x'"):
        input_plan(job(TransferInput="../x", PreserveRelativePaths=True))


def test_two_inputs_with_one_name_are_refused():
    """Two inputs landing as the same sandbox name is a clear error."""
    with pytest.raises(BadTransferPathError, match="'b.txt'"):
        input_plan(job(TransferInput="a/b.txt,c/b.txt"))


def test_url_without_file_name_is_refused():
    """A URL ending in '/' names no file (no whole-bucket transfers)."""
    with pytest.raises(BadTransferPathError, match="names no file"):
        input_plan(job(TransferInput="s3://bucket/dir/"))


def test_relative_input_without_iwd_is_refused():
    """A relative path needs Iwd to be resolved."""
    with pytest.raises(BadTransferPathError, match="no Iwd"):
        input_plan(job(Iwd=None, Cmd="/bin/true", TransferInput="a.txt"))


def test_output_plan_lists_streams_remaps_and_destination():
    """TransferOutput entries, Out/Err under Iwd, remaps and OutputDestination are read."""
    plan = output_plan(job(TransferOutput="r.txt,res/,deep/x.dat", Out="out.txt", Err="/logs/err",
                           TransferOutputRemaps="r.txt = sub/r2.txt; x.dat = /abs/e"))
    assert plan.files == (OutputFile("r.txt"), OutputFile("res", contents_only=True),
                          OutputFile("deep/x.dat"))
    assert plan.target(STDOUT_NAME) == "/home/u/work/out.txt"
    assert plan.target(STDERR_NAME) == "/logs/err"
    assert plan.target("r.txt") == "/home/u/work/sub/r2.txt"
    assert plan.target("x.dat") == "/abs/e"
    assert plan.target("other") == "/home/u/work/other"
    assert plan.transfer_name("deep/x.dat") == "x.dat"


def test_unset_transfer_output_means_scan_and_empty_means_nothing():
    """No TransferOutput scans for new files; an empty one sends nothing back."""
    assert output_plan(job()).files is None
    assert output_plan(job(TransferOutput="")).files == ()


def test_output_destination_and_url_remaps_give_urls():
    """OutputDestination prefixes every output; a URL remap wins; stdout stays local."""
    plan = output_plan(job(OutputDestination="s3://b/out/", Out="o",
                           TransferOutputRemaps="a = file:///tmp/a.txt"))
    assert plan.target("r.txt") == "s3://b/out/r.txt"
    assert plan.target("a") == "file:///tmp/a.txt"
    assert plan.target(STDOUT_NAME) == "/home/u/work/o"


def test_streamed_and_null_outputs_are_not_transferred():
    """Out = /dev/null and StreamErr = true leave those streams out."""
    plan = output_plan(job(Out="/dev/null", Err="e", StreamErr=True))
    assert plan.target(STDOUT_NAME) is None and plan.target(STDERR_NAME) is None


@pytest.mark.parametrize("bad", ["/etc/passwd", "../up", "a/../../b", "", "."])
def test_output_names_must_stay_in_the_sandbox(bad):
    """Absolute, climbing or empty TransferOutput names are refused."""
    with pytest.raises(BadTransferPathError, match=r"job 7\.2"):
        output_plan(job(TransferOutput=f"ok.txt,{bad}" if bad else "ok.txt,/"))


def test_remaps_honour_backslash_escapes():
    """'\\=' and '\\;' are literal characters inside remap names and targets."""
    assert parse_remaps("1.0", r"a\=b.txt = x\;y ; c = d") == [("a=b.txt", "x;y"), ("c", "d")]


@pytest.mark.parametrize("bad", ["a.txt", "= x", "a = ", "../a = b"])
def test_malformed_remaps_are_refused(bad):
    """A remap without both sides, or whose name climbs out, is an error naming it."""
    with pytest.raises(BadTransferPathError, match="TransferOutputRemaps"):
        parse_remaps("1.0", bad)


def test_bad_path_error_holds_with_input_failed_code():
    """A bad path carries HoldReasonCode 13 and a subcode for the schedd."""
    with pytest.raises(BadTransferPathError) as caught:
        input_plan(job(TransferInput="s3://b/"))
    attrs = caught.value.hold_attributes()
    assert attrs["HoldReasonCode"] == 13 and attrs["HoldReasonSubCode"] == 22
    assert "7.2" in attrs["HoldReason"]
