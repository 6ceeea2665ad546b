"""The schedd's self-contained mode of the submit language (include, $ENV and items
from files, commands and globs refused, nothing of the host read or run), the
client's rewrite of those forms into an equivalent self-contained description,
the count limit checked before any proc is made, and huge numbers."""

from __future__ import annotations

import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bindings.submit import Submit
from schedd.submit import SubmitError, SubmitOptions, expand, parse_description, to_classads
from schedd.submit.clientside import for_schedd
from schedd.submit.jobs import MAX_PROCS_PER_SUBMIT

SECRET = "TOKEN-sekrit-0123456789"
#: Attributes measured from the submitting machine's files, which the schedd does not look at.
MEASURED = {"ExecutableSize", "ImageSize", "DiskUsage"}


def schedd_expand(text: str, cwd, environ=None):
    """Expand ``text`` as the schedd does: self-contained, from ``cwd``."""
    environ = environ or {}
    description = parse_description(text, cwd=str(cwd), environ=environ, self_contained=True)
    return expand(description, SubmitOptions(cwd=str(cwd), environ=environ, qdate=5, self_contained=True))


def client_ads(text: str, cwd, environ):
    description = parse_description(text, cwd=str(cwd), environ=environ)
    return _comparable(to_classads(expand(description, SubmitOptions(cwd=str(cwd), environ=environ, qdate=5))))


def _comparable(ads):
    return [{name: str(ad.lookup(name)) for name in ad.keys() if name not in MEASURED} for ad in ads]


@pytest.fixture
def secret_dir(tmp_path):
    (tmp_path / "tokens").mkdir()
    (tmp_path / "tokens" / "daemon").write_text(SECRET + "\n")
    (tmp_path / "items.txt").write_text("a 1\nb 2\n")
    return tmp_path


# --- the schedd's refusals ----------------------------------------------------------

@pytest.mark.parametrize("line, effect", [
    ("queue t from tokens/daemon", "reads a file"),
    ("queue x from /usr/bin/touch {marker} |", "runs a command"),
    ("queue f matching tokens/*", "lists files"),
])
def test_queue_items_from_the_host_are_refused_naming_the_line(secret_dir, line, effect):
    """Items from a file, a command or a glob are refused with the line and what to do."""
    marker = secret_dir / "pwned"
    text = f"executable = /bin/true\narguments = $(t)\n{line.format(marker=marker)}\n"
    with pytest.raises(SubmitError) as caught:
        schedd_expand(text, secret_dir)
    message = str(caught.value)
    assert "line 3" in message and effect in message and "roost submit" in message
    assert SECRET not in message
    assert not marker.exists()


def test_include_is_refused_without_reading_the_file(secret_dir):
    """``include`` names the line and never echoes the file."""
    with pytest.raises(SubmitError) as caught:
        parse_description("executable = /bin/true\n\ninclude : tokens/daemon\nqueue\n",
                          cwd=str(secret_dir), self_contained=True)
    message = str(caught.value)
    assert "line 3" in message and "reads a file" in message and SECRET not in message


@pytest.mark.parametrize("text", [
    "executable = /bin/true\narguments = $ENV(HOME)\nqueue\n",
    "executable = /bin/true\nqueue $ENV(COUNT)\n",
    "executable = /bin/true\nif $ENV(FLAG:0)\nendif\nqueue\n",
])
def test_env_is_refused_by_the_schedd(tmp_path, text):
    """``$ENV(...)`` is the client's to expand, wherever it stands."""
    with pytest.raises(SubmitError, match=r"\$ENV\(.*reads the environment"):
        schedd_expand(text, tmp_path, {"HOME": "/home/x", "COUNT": "2", "FLAG": "1"})


def test_inline_items_and_counts_are_self_contained(tmp_path):
    """What needs nothing of the host still expands in the schedd."""
    text = ("executable = /bin/true\narguments = $(x) $(y)\nqueue 2 x, y from (\n a 1\n b 2\n)\n"
            "queue z in (p, q)\nqueue 3\n")
    clusters = schedd_expand(text, tmp_path)
    assert [len(cluster.procs) for cluster in clusters] == [4, 2, 3]


def test_the_schedd_does_not_measure_files_or_check_directories(secret_dir):
    """No stat of the schedd's own files: sizes are 0 and initialdir is not probed."""
    text = "executable = tokens/daemon\ninitialdir = nowhere\ntransfer_input_files = items.txt\nqueue\n"
    ad = next(iter(to_classads(schedd_expand(text, secret_dir))))
    assert (ad["ExecutableSize"], ad["DiskUsage"]) == (0, 0)


def test_an_included_non_submit_file_is_named_not_echoed(secret_dir):
    """On the client too: a bad line of an included file is named by file and line only."""
    with pytest.raises(SubmitError) as caught:
        parse_description("include : tokens/daemon\nqueue\n", cwd=str(secret_dir))
    message = str(caught.value)
    assert message.startswith("tokens/daemon, line 1:") and SECRET not in message


# --- hypothesis: no file or process, whatever the mix -------------------------------

_EVENTS: list[tuple[str, str]] = []
_WATCHING = [False]


def _audit(event, args):
    if _WATCHING[0] and event in ("open", "subprocess.Popen", "os.system", "os.posix_spawn", "os.exec",
                                  "glob.glob", "os.scandir", "os.listdir"):
        _EVENTS.append((event, str(args[0]) if args else ""))


sys.addaudithook(_audit)

_FORMS = st.sampled_from([
    "include : {marker}", "include {marker}", "queue x from {marker}", "queue 2 x, y from [1:] {marker}",
    "queue x from /usr/bin/touch {marker} |", "queue x from cat {marker} |", "queue f matching {marker}*",
    "queue f matching files {marker}", "arguments = $ENV({name})", "x = $ENV({name}:{marker})",
    "queue $ENV({name})", "output = $(x:$ENV({name}))",
])
_FILLER = st.sampled_from(["executable = /bin/true", "arguments = $(x)", "x = 1", "queue", "queue 2",
                           "queue y in (a, b)", "if defined x\ny = 2\nendif", "# comment", ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.lists(_FILLER, max_size=4), form=_FORMS, after=st.lists(_FILLER, max_size=3),
       name=st.sampled_from(["HOME", "PATH", "X"]))
def test_no_mix_makes_the_schedd_open_a_file_or_start_a_process(secret_dir, before, form, after, name):
    """Any description holding a client-only form is refused, and while the schedd's
    expansion runs no file is opened, no directory listed and no process started."""
    marker = secret_dir / "tokens" / "daemon"
    text = "\n".join(["executable = /bin/true"] + before + [form.format(marker=marker, name=name)] + after) + "\n"
    if "queue" not in form:
        text += "queue\n"
    _EVENTS.clear()
    _WATCHING[0] = True
    try:
        with pytest.raises(SubmitError) as caught:
            schedd_expand(text, secret_dir, {"HOME": "/h", "PATH": "/bin", "X": "1"})
    finally:
        _WATCHING[0] = False
    assert "roost submit" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert _EVENTS == []
    assert not (secret_dir / "tokens" / "daemon |").exists()


# --- the client's rewrite -------------------------------------------------------------

@pytest.mark.integration  # queue ... from a command runs it
def test_client_rewrite_gives_the_same_jobs(secret_dir):
    """include, $ENV, items from a file, a command and a glob, written self-contained."""
    (secret_dir / "common.sub").write_text("request_memory = 64M\nnote = $ENV(HOME)\n")
    (secret_dir / "x.dat").touch()
    (secret_dir / "y.dat").touch()
    environ = {"HOME": "/home/u$x", "V": "7"}
    text = ("executable = /bin/echo\narguments = $(a) $(b) $ENV(V) $(note)\ninclude : common.sub\n"
            "queue a, b from items.txt\narguments = m $(f)\nqueue f matching *.dat\n"
            "queue 2 x from [1:] echo p q r |\n")
    sent = for_schedd(text, cwd=str(secret_dir), environ=environ)
    assert "include" not in sent and "$ENV" not in sent and "items.txt" not in sent
    assert _comparable(to_classads(schedd_expand(sent, secret_dir, environ))) == client_ads(text, secret_dir, environ)


def test_a_self_contained_description_is_sent_as_written(tmp_path):
    text = "executable = /bin/true\narguments = $(Process)\nqueue 3\n"
    assert for_schedd(text, cwd=str(tmp_path), environ={}) == text


def test_a_rewritten_description_reports_errors_at_the_users_line(secret_dir):
    """An error in a rewritten description names the included file and its line."""
    (secret_dir / "bad.sub").write_text("x = 1\nrequest_cpus = 1 +\n")
    with pytest.raises(SubmitError) as caught:
        for_schedd("executable = /bin/true\ninclude : bad.sub\nqueue x from items.txt\n",
                   cwd=str(secret_dir), environ={})
    assert str(caught.value).startswith("bad.sub, line 2: request_cpus:")


def test_an_item_that_cannot_be_written_inline_is_refused_clearly(tmp_path):
    (tmp_path / "items.txt").write_text("good\nrun(1).dat\n")
    with pytest.raises(SubmitError, match=r"line 2: queue: item 1 of 'items.txt' cannot be sent"):
        for_schedd("executable = /bin/true\nqueue f from items.txt\n", cwd=str(tmp_path), environ={})


# --- counts -----------------------------------------------------------------------

def test_too_many_procs_are_refused_before_any_is_made(tmp_path):
    """``queue 1500000`` is refused at once (it took 8 s and 226 MiB before)."""
    started = time.monotonic()
    with pytest.raises(SubmitError, match=f"line 2: queue: .*more than the {MAX_PROCS_PER_SUBMIT}"):
        schedd_expand("executable = /bin/true\nqueue 1500000\n", tmp_path)
    assert time.monotonic() - started < 1.0


def test_count_times_items_and_several_statements_count_together(tmp_path):
    half = MAX_PROCS_PER_SUBMIT // 2 + 1
    with pytest.raises(SubmitError, match="more than"):
        schedd_expand(f"executable = /bin/true\nqueue {half} x from (\na\nb\n)\n", tmp_path)
    with pytest.raises(SubmitError, match="line 3: queue: .*more than"):
        schedd_expand(f"executable = /bin/true\nqueue {half}\nqueue {half}\n", tmp_path)


@pytest.mark.parametrize("method", ["jobs", "clusters"])
def test_a_billion_procs_in_bindings_submit_is_refused_at_once(method):
    """``queue 1000000000`` no longer exhausts memory in bindings.Submit."""
    started = time.monotonic()
    with pytest.raises(SubmitError, match="more than"):
        getattr(Submit("executable = /bin/true\nqueue 1000000000\n"), method)()
    assert time.monotonic() - started < 1.0


# --- huge numbers -----------------------------------------------------------------

BIG = "9" * 5000


@pytest.mark.parametrize("line", [
    f"request_memory = {BIG}", f"request_disk = {BIG}", f"request_cpus = {BIG}", f"MY.x = {BIG}",
    f"max_retries = {BIG}", f"priority = {BIG}", f"queue {BIG}", f"x = {BIG}\narguments = $INT(x)",
    f"arguments = $CHOICE({BIG}, a, b)",
])
def test_a_huge_integer_literal_is_a_submit_error(tmp_path, line):
    """Thousands of digits give a SubmitError naming the line, not a ValueError."""
    with pytest.raises(SubmitError) as caught:
        schedd_expand(f"executable = /bin/true\n{line}\nqueue\n", tmp_path)
    assert type(caught.value) is SubmitError and "line " in str(caught.value)


def test_a_self_contained_description_is_parsed_once_and_its_files_measured_each_time(tmp_path):
    """prepared_for_schedd remembers which files a self-contained description names, and
    measures them again on every call (a file may grow between submits)."""
    from schedd.submit import clientside

    program = tmp_path / "prog"
    program.write_bytes(b"x" * 10)
    text = "executable = prog\ninput = data.in\nqueue\n"
    sent, sizes = clientside.prepared_for_schedd(text, cwd=str(tmp_path), environ={})
    assert sent == text and sizes == clientside.measured_sizes(text, cwd=str(tmp_path), environ={})
    assert sizes[str(program)] == 1 and sizes[str(tmp_path / "data.in")] == 0
    assert (text, str(tmp_path)) in clientside._SELF_CONTAINED
    program.write_bytes(b"x" * 5000)
    (tmp_path / "data.in").write_bytes(b"y" * 3000)
    assert clientside.prepared_for_schedd(text, cwd=str(tmp_path), environ={})[1] == {
        str(program): 5, str(tmp_path / "data.in"): 3}


def test_descriptions_reading_the_host_or_wrong_are_never_remembered(tmp_path):
    """A description with $ENV or an include is rewritten on every call, and a wrong one raises every time."""
    from schedd.submit import clientside

    for text in ("executable = /bin/echo\narguments = $ENV(WORD)\nqueue\n",
                 "executable = /bin/echo\ninclude : more.sub\nqueue\n"):
        (tmp_path / "more.sub").write_text("arguments = one\n")
        first = clientside.prepared_for_schedd(text, cwd=str(tmp_path), environ={"WORD": "a"})[0]
        (tmp_path / "more.sub").write_text("arguments = two\n")
        second = clientside.prepared_for_schedd(text, cwd=str(tmp_path), environ={"WORD": "b"})[0]
        assert first != second and (text, str(tmp_path)) not in clientside._SELF_CONTAINED
    wrong = "executable = /bin/echo\nqueue 3 x from ( a\n"
    for _ in range(2):
        with pytest.raises(SubmitError):
            clientside.prepared_for_schedd(wrong, cwd=str(tmp_path), environ={})


def test_the_environment_goes_with_descriptions_that_read_it():
    """reads_environ: getenv and use_scitokens take the submitter's environment; other descriptions go without it."""
    from schedd.submit.clientside import reads_environ

    assert reads_environ("executable = x\nGetEnv = true\nqueue\n")
    assert reads_environ("executable = x\nuse_scitokens = true\nqueue\n")
    assert not reads_environ("executable = /bin/sleep\narguments = 60\nqueue\n")
