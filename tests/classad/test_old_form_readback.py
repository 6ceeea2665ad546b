"""The long form ``roost q -l``, ``roost status -l`` and ``roost history -l`` print
(old syntax, one ``Name = expr`` per line) reads back to the same ad: with Roost's
old-syntax reader, which follows HTCondor's source.cpp/lexer.cpp, and with HTCondor's
own classad2 parser when the ``htcondor`` package is installed."""

import pytest

import classad
from bindings.cli.status_format import long_form
from classad.unparse import unparse_expr
from tests.support.htcondor_baseline import read_old_with_classad2

JOB = """[
    ClusterId = 12; ProcId = 0; Owner = "alice"; JobStatus = 2; JobPrio = -3;
    Cmd = "/home/alice/bin/run \\"quoted\\" job"; Iwd = "C:\\\\work\\\\dir\\\\";
    Arguments = "a\\\\b 'c'"; Environment = "PATH=/bin;HOME=/home/alice";
    RequestMemory = 2048; RequestCpus = 1; ImageSize_RAW = 1.5; CumulativeSlotTime = 0.0;
    RemoteUserCpu = 100.0; Tiny = 1e-05; Huge = 1e16; Third = 0.30000000000000004;
    Requirements = TARGET.Memory >= RequestMemory && (TARGET.Arch == "X86_64") && TARGET.HasFileTransfer;
    Rank = TARGET.Mips isnt undefined ? TARGET.Mips : 0; NotSame = a =!= b;
    TransferInput = { "in.dat", "lib/" }; Nested = [ x = 1.25; y = "s" ];
    PeriodicRemove = JobStatus == 5 && time() - EnteredCurrentStatus > 3600;
    Accented = "caf\\303\\251"; Empty = ""; Neg = -0.0
]"""
MACHINE = """[
    Name = "slot1@host.example.org"; Machine = "host.example.org"; State = "Unclaimed";
    Activity = "Idle"; Memory = 4096; Cpus = 4; LoadAvg = 0.125; Mips = 31000;
    Start = KeyboardIdle > 15 * 60 || State =?= "Owner"; TotalDisk = 1.0e9;
    ChildCpus = { 1, 2, 3 }; CondorVersion = "$CondorVersion: 25.0 $"
]"""


def _printed() -> str:
    return long_form([classad.ClassAd(JOB), classad.ClassAd(MACHINE)])


def _canonical(ad) -> dict:
    return {name.lower(): unparse_expr(ad.lookup(name).node) for name in ad}


def test_long_form_reads_back_with_the_old_syntax_reader():
    """source.cpp/lexer.cpp old syntax: every printed line reads back as one attribute
    with the same expression (strings with quotes, backslashes and a trailing
    backslash, reals, lists, nested ads, =?=/=!=)."""
    text = _printed()
    back = list(classad.parseAds(text, classad.ParserType.Old))
    originals = [classad.ClassAd(JOB), classad.ClassAd(MACHINE)]
    assert [_canonical(ad) for ad in back] == [_canonical(ad) for ad in originals]
    for line in text.splitlines():
        if line:
            assert len(classad.parseOne(line, classad.ParserType.Old)) == 1, line


def test_long_form_prints_reals_and_meta_operators_as_htcondor():
    """sink.cpp in old-ClassAd mode prints reals in %.16G (a whole number gets '.0')
    and keeps =?= / =!= rather than is / isnt."""
    lines = set(_printed().splitlines())
    for expected in ("ImageSize_RAW = 1.5", "CumulativeSlotTime = 0.0", "RemoteUserCpu = 100.0",
                     "Tiny = 1E-05", "Huge = 1E+16", "Third = 0.3", "Neg = -0.0",
                     "NotSame = a =!= b", "LoadAvg = 0.125", "TotalDisk = 1000000000.0",
                     "Nested = [ x = 1.25; y = \"s\" ]",
                     "Start = KeyboardIdle > 15 * 60 || State =?= \"Owner\""):
        assert expected in lines


@pytest.mark.integration
def test_long_form_parses_with_htcondors_classad2():
    """HTCondor's own old-syntax parser (classad2.parseAds with ParserType.Old) reads
    the long form to the same expressions, compared in HTCondor's canonical form."""
    back = read_old_with_classad2(_printed())
    originals = [classad.ClassAd(JOB), classad.ClassAd(MACHINE)]
    assert back == [_canonical(ad) for ad in originals]
