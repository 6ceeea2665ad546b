"""Unit tests of the submit language's text parts: macros, conditionals, queue forms,
arguments, environment and sizes."""

from __future__ import annotations

import warnings

import pytest

from bindings.submit import Submit
from schedd.submit import SubmitError, SubmitWarning
from schedd.submit.arguments import job_arguments
from schedd.submit.description import parse_description
from schedd.submit.environment import job_environment
from schedd.submit.macros import MacroScope
from schedd.submit.queue_statement import item_rows, parse_queue_args
from schedd.submit.values import size_value


def expand(text: str, **commands: str) -> str:
    return MacroScope(commands).expand(text)


def test_default_and_nested_macros_expand():
    assert expand("$(x:fallback) $($(name))", name="target", target="found") == "fallback found"


def test_dollar_dollar_is_left_for_match_time():
    assert expand("$$(OpSys) $(DOLLAR)(x)") == "$$(OpSys) $(x)"


def test_path_function_letters_combine():
    scope = MacroScope({"p": "/data/sub/file.tar.gz"})
    assert scope.expand("$Fn(p)|$Fdb(p)|$Fxb(p)|$Fz(p)") == "file.tar|sub|gz|$Fz(p)"


def test_substr_and_choice():
    assert expand("$SUBSTR(n,1,3) $CHOICE(1, l)", n="abcdef", l="red, green") == "bcd green"


def test_self_reference_uses_the_previous_value():
    d = parse_description("foo = bar\nfoo = snap $(foo)\n")
    assert d.commands["foo"].value == "snap bar"


def test_conditionals_choose_the_branch():
    d = parse_description("flag = 0\nif $(flag)\nA = 1\nelif true\nA = 2\nelse\nA = 3\nendif\n")
    assert d.commands["a"].value == "2"


@pytest.mark.parametrize("text", ["if $(m) == fast\nendif\n", "else\n", "if true\n",
                                  "if true\nelse\nelse\nendif\n"])
def test_bad_conditionals_are_refused(text):
    with pytest.raises(SubmitError):
        parse_description(text)


def test_error_names_line_and_expectation():
    with pytest.raises(SubmitError, match=r"line 2: .*expected 'name = value'"):
        parse_description("a = 1\nnot a command\n")


def test_queue_forms_parse():
    spec = parse_queue_args("2 x, y from [1:] (a 1)")
    assert (spec.count, spec.variables, spec.mode, spec.slice) == (2, ("x", "y"), "from", (1, None, None))
    assert parse_queue_args("2*3").count == 6


def test_slice_keeps_item_index(tmp_path):
    rows = item_rows(parse_queue_args("in [1:] (a, b, c)"), str(tmp_path))
    assert [(r.index, r.values) for r in rows] == [(1, (("Item", "b"),)), (2, (("Item", "c"),))]


@pytest.mark.parametrize("args", ["-1", "abc", "2 # comment", "x in [a:b] (a)", "x in (a, b"])
def test_bad_queue_arguments_are_refused(args):
    with pytest.raises(SubmitError):
        parse_queue_args(args)


def test_quoted_items_are_refused(tmp_path):
    with pytest.raises(SubmitError, match="quotes"):
        item_rows(parse_queue_args('in ("quoted item", b)'), str(tmp_path))


def test_new_syntax_arguments_requote_minimally():
    assert job_arguments('"one \'two with spaces\' 3"', None, False) == (
        "Arguments", "one two' 'with' 'spaces 3")


def test_old_syntax_arguments_collapse_blanks():
    assert job_arguments("a\t b  \\\"c\\\"", None, False) == ("Args", 'a b "c"')


def test_environment_sorted_and_overrides_imported():
    env = job_environment("Z=1;A=x y", None, None, "H*", False, {"HOME": "/h", "X": "1"})
    assert env == {"Environment": "A=x' 'y HOME=/h Z=1"}


@pytest.mark.parametrize("text,unit,expected", [("2G", 1 << 20, 2048), ("512K", 1 << 20, 1),
                                                ("-5", 1 << 20, -4), ("3.5M", 1 << 10, 3584),
                                                ("1e3", 1 << 20, 1000.0)])
def test_sizes_round_up_to_whole_units(text, unit, expected):
    value = size_value(text, unit, "request_memory")
    assert value == expected and type(value) is type(expected)


def test_bad_size_names_the_command():
    with pytest.raises(SubmitError, match="request_memory: '12XB' is not a size"):
        size_value("12XB", 1 << 20, "request_memory")


def test_misspelled_command_warns_with_suggestion(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Submit("executable = x\nrequest_memmory = 10\nqueue\n").jobs()
    assert any(issubclass(w.category, SubmitWarning) and "request_memory" in str(w.message)
               for w in caught)


def test_cluster_shares_attributes_and_procs_hold_differences(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    [cluster] = Submit("executable = x\narguments = $(Process)\nqueue 3\n").clusters(clusterid=7)
    assert set(cluster.procs[2]) == {"procid", "args"}
    assert cluster.cluster["cmd"][1].endswith("/x")


def test_procs_no_rule_reads_differ_only_in_their_proc_id(tmp_path, monkeypatch):
    """A plain ``queue N`` keeps proc 0's differences and makes the others' (ProcId alone) when read."""
    monkeypatch.chdir(tmp_path)
    [cluster] = Submit("executable = x\nqueue 4\n").clusters(clusterid=7)
    assert list(cluster.procs) == [{"procid": ("ProcId", n)} for n in range(4)]
    assert cluster.procs[-1] == {"procid": ("ProcId", 3)} and cluster.procs[1:3] == [cluster.procs[1], cluster.procs[2]]
    assert [cluster.procs.is_plain(n) for n in range(4)] == [False, True, True, True]
    assert cluster.proc_attrs(2)["procid"] == ("ProcId", 2)
    with pytest.raises(IndexError):
        cluster.procs[4]
    [args] = Submit("executable = x\narguments = $(Process)\nqueue 2\n").clusters(clusterid=7)
    assert not args.procs.is_plain(1) and args.procs[1]["args"][1] == "1"


def test_failing_proc_produces_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d0").mkdir()
    with pytest.raises(SubmitError, match="initial directory 'd1'"):
        Submit("executable = x\ninitialdir = d$(Process)\nqueue 2\n").jobs()


def test_submit_mapping_and_qargs():
    sub = Submit({"executable": "prog"})
    sub["+Project"] = '"p"'
    sub.setQArgs("2")
    assert sub.getQArgs() == "2" and sub["MY.Project"] == '"p"'
    assert "queue 2" in str(sub)
