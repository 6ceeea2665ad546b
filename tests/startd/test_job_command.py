"""Tests for startd.job_command: arguments and environment in both of HTCondor's syntaxes."""

import pytest

import classad
from startd.errors import StarterError
from startd.job_command import job_argv, job_environment, split_new_syntax


def test_new_syntax_groups_with_single_quotes_and_doubles_them_to_escape():
    """'b c' is one word, '' inside quotes is a quote, "" is a double quote."""
    assert split_new_syntax("a 'b c' 'it''s' \"\"q\"\" ''") == ["a", "b c", "it's", '"q"', ""]


def test_arguments_win_over_args():
    """Arguments (new syntax) is used when both are present."""
    ad = classad.ClassAd({"Arguments": "'x y' z", "Args": "ignored"})
    assert job_argv(ad) == ["x y", "z"]
    assert job_argv(classad.ClassAd({"Args": r'one \"two\"'})) == ["one", '"two"']
    assert job_argv(classad.ClassAd({})) == []


def test_environment_in_both_syntaxes():
    """Environment's words and Env's semicolon entries become variables."""
    assert job_environment(classad.ClassAd({"Environment": "A=1 'B=x y'"})) == {"A": "1", "B": "x y"}
    assert job_environment(classad.ClassAd({"Env": "A=1;B=2"})) == {"A": "1", "B": "2"}
    assert job_environment(classad.ClassAd({"Env": "A=1|B=2", "EnvDelim": "|"})) == {"A": "1", "B": "2"}


def test_bad_environment_and_unclosed_quote_are_clear_errors():
    """An entry without = and an open quote say what is wrong."""
    with pytest.raises(StarterError, match="'NOVALUE' is not NAME=VALUE"):
        job_environment(classad.ClassAd({"Environment": "NOVALUE"}))
    with pytest.raises(StarterError, match="never closed"):
        job_argv(classad.ClassAd({"Arguments": "'open"}))
