"""Submit commands checked against the rules of HTCondor's submit code
(``src/condor_utils/submit_utils.cpp``), one rule per test, with the function named."""

from __future__ import annotations

import os
import warnings

import pytest

from schedd.submit import SubmitError, SubmitOptions, expand, parse_description, to_classads
from schedd.submit.clientside import for_schedd
from schedd.submit.transfer_modes import transfer_modes


def ads(text: str, cwd: str) -> list:
    """The job ads of a description submitted from ``cwd``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        description = parse_description(text, cwd=cwd)
        return list(to_classads(expand(description, SubmitOptions(cwd=cwd, owner="alice"))))


@pytest.fixture
def here(tmp_path):
    (tmp_path / "prog").write_text("#!/bin/sh\n")
    return os.fspath(tmp_path)


@pytest.mark.parametrize("spelling, written", [
    ("yes", "YES"), ("TRUE", "YES"), ("always", "YES"), ("no", "NO"), ("False", "NO"),
    ("never", "NO"), ("if_needed", "IF_NEEDED"), ("auto", "IF_NEEDED")])
def test_should_transfer_files_spellings(spelling, written):
    """enum_utils.cpp ShouldTransferFilesTranslation: each spelling, any case, is written
    back as the table's first name for its value."""
    assert transfer_modes(spelling, None).should == written


@pytest.mark.parametrize("spelling, written", [
    ("onexit", "ON_EXIT"), ("Always", "ON_EXIT_OR_EVICT"), ("onsuccess", "ON_SUCCESS")])
def test_when_to_transfer_output_spellings(spelling, written):
    """enum_utils.cpp FileTransferOutputTranslation: ALWAYS is ON_EXIT_OR_EVICT, ONEXIT is
    ON_EXIT, ONSUCCESS is ON_SUCCESS."""
    assert transfer_modes("YES", spelling).when == written


def test_on_exit_or_evict_alone_turns_transfer_on():
    """SubmitHash::SetTransferFiles: ON_EXIT_OR_EVICT with no should_transfer_files makes
    it YES rather than refusing the default IF_NEEDED."""
    assert transfer_modes(None, "ON_EXIT_OR_EVICT").should == "YES"
    with pytest.raises(SubmitError):
        transfer_modes("IF_NEEDED", "ON_EXIT_OR_EVICT")


@pytest.mark.parametrize("should, when, lists", [
    ("NO", "ON_EXIT", False), ("YES", "NONE", False), ("NO", None, True), ("sometimes", None, False)])
def test_contradictory_transfer_modes_are_refused(should, when, lists):
    """SubmitHash::SetTransferFiles errors (C), (D), (F) and (A): an output time with
    NO, no output time with transfer on, file lists with NO, an unknown word."""
    with pytest.raises(SubmitError):
        transfer_modes(should, when, has_transfer_lists=lists)


def test_transfer_commands_by_their_attribute_names(here):
    """SetTransferFiles reads ShouldTransferFiles and WhenToTransferOutput under their
    attribute names too."""
    ad = ads("executable = prog\nShouldTransferFiles = true\nWhenToTransferOutput = always\nqueue\n", here)[0]
    assert (ad["ShouldTransferFiles"], ad["WhenToTransferOutput"]) == ("YES", "ON_EXIT_OR_EVICT")


@pytest.mark.parametrize("text, prio", [("1.5", 1), ("-2.7", -2), ("ifThenElse(true, 3, 4)", 3), ("true", 1)])
def test_priority_is_coerced_to_an_integer(here, text, prio):
    """SubmitHash::SetPriority reads priority with submit_param_int (string_is_long_param):
    any expression whose value is a number, a real truncated."""
    assert ads(f"executable = prog\npriority = {text}\nqueue\n", here)[0]["JobPrio"] == prio


def test_priority_that_is_not_a_number_is_refused(here):
    """submit_param_int: a value that does not evaluate to a number is an error."""
    with pytest.raises(SubmitError, match="priority"):
        ads('executable = prog\npriority = "high"\nqueue\n', here)


@pytest.mark.parametrize("count, procs", [("1.5", 1), ("2.9", 2), ("4/2", 2)])
def test_queue_count_is_coerced_to_an_integer(here, count, procs):
    """SubmitForeachArgs::parse_queue_args reads the count with string_is_long_param:
    ``queue 1.5`` queues one job."""
    assert len(ads(f"executable = prog\nqueue {count}\n", here)) == procs


def test_loop_variables_named_like_commands_set_those_commands(here):
    """condor_submit.rst, queue ... from: the loop variables are set into the submit hash
    for each row, so ``queue input, arguments from (...)`` gives each job its row's
    input and arguments, over any earlier command of the same name."""
    text = ("executable = prog\narguments = ignored\n"
            "queue input, arguments from (\n  a.txt, one\n  b.txt, two 2\n)\n")
    got = [(ad["In"], ad["Args"]) for ad in ads(text, here)]
    assert got == [("a.txt", "one"), ("b.txt", "two 2")]


@pytest.mark.integration
def test_include_of_a_command_reads_what_it_prints(here):
    """condor_submit.rst, include: ``include : cmd |`` runs the command on the submitting
    side and reads its output as more of the description."""
    with open(os.path.join(here, "make.sh"), "w") as f:
        f.write("#!/bin/sh\necho 'arguments = from-command'\n")
    os.chmod(os.path.join(here, "make.sh"), 0o755)
    ad = ads("executable = prog\ninclude : ./make.sh |\nqueue\n", here)[0]
    assert ad["Args"] == "from-command"


def test_the_schedd_refuses_an_include_that_runs_a_command(here):
    """DESIGN.md, security: the schedd never runs a command for a client; in its
    self-contained mode ``include : cmd |`` is refused before anything runs."""
    marker = os.path.join(here, "ran")
    with pytest.raises(SubmitError, match="runs a command"):
        parse_description(f"executable = prog\ninclude : touch {marker} |\nqueue\n", cwd=here,
                          self_contained=True)
    assert not os.path.exists(marker)


def test_command_line_assignments_come_before_the_file(here):
    """condor_submit.rst, synopsis (``condor_submit X=3 file``): an assignment on the
    command line is made before the file is read, so ``if`` sees it."""
    text = "executable = prog\nif $(fast)\n  arguments = quick\nelse\n  arguments = slow\nendif\nqueue\n"
    description = parse_description(text, cwd=here, assignments={"fast": "true"})
    ad = next(iter(to_classads(expand(description, SubmitOptions(cwd=here)))))
    assert ad["Args"] == "quick"
    assert "slow" in for_schedd(text, cwd=here, environ={}, assignments={"fast": "false"})


def test_cron_window_and_prep_time_set_the_deferral_attributes(here):
    """SubmitHash::SetJobDeferral: cron_window and cron_prep_time fill DeferralWindow and
    DeferralPrepTime (over deferral_window/deferral_prep_time); unset, they are 0 and 300."""
    ad = ads("executable = prog\ncron_minute = 5\ncron_window = 30\ndeferral_window = 9\nqueue\n", here)[0]
    assert (ad["DeferralWindow"], ad["DeferralPrepTime"], ad["ScheddInterval"]) == (30, 300, 300)


@pytest.mark.parametrize("line", ["deferral_time = -5", "deferral_time = 1.5",
                                  "deferral_time = 10\ndeferral_prep_time = -1"])
def test_deferral_values_must_be_non_negative_integers(here, line):
    """SubmitHash::SetJobDeferral: a literal deferral time, window or prep time must
    evaluate to a non-negative integer."""
    with pytest.raises(SubmitError):
        ads(f"executable = prog\n{line}\nqueue\n", here)


def test_scheduler_universe_jobs_cannot_be_deferred(here):
    """SubmitHash::SetJobDeferral: job deferral does not work for scheduler universe jobs."""
    with pytest.raises(SubmitError, match="scheduler"):
        ads("executable = prog\nuniverse = scheduler\ndeferral_time = 100\nqueue\n", here)


def test_built_requirements_skip_the_parser_only_when_every_token_is_plain():
    """Submit's own Requirements text is taken without the parser only when each of its
    tokens is a plain one (a keyword as a name, or an operator outside the set, is parsed)."""
    from schedd.submit.requirements import _plain_tokens

    assert _plain_tokens('(TARGET.Arch == "X86_64") && (TARGET.Disk >= RequestDisk) && '
                         '((TARGET.FileSystemDomain == MY.FileSystemDomain) || (TARGET.HasFileTransfer))')
    assert _plain_tokens('versioncmp(split(TARGET.CondorVersion)[1],"8.9.7") >= 0')
    assert not _plain_tokens("(TARGET.is >= Requestis)")
    assert not _plain_tokens('stringListIMember("a"b",TARGET.X)')
    assert not _plain_tokens("(time() + ScheddInterval)")
