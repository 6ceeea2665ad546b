"""Replays every ClassAd conformance case generated with HTCondor 25's own library:
expression evaluation and printing, matching, and the three text forms."""

from __future__ import annotations

import json
import pathlib

import pytest

import classad
from classad.evaluate import context_for, root_of, select_from
from classad.unparse import unparse_expr
from tests.support.typed_values import same, typed

HERE = pathlib.Path(__file__).parent / "classad"


def _cases(name: str) -> list[dict]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _params(name: str):
    return [pytest.param(c, id=c["id"]) for c in _cases(name)]


def _attr_in(scope, target):
    def evaluate_attr(ad, name):
        ctx = context_for(scope, None if target is None else root_of(target))
        return select_from(ctx, ad, name.lower())
    return evaluate_attr


@pytest.mark.parametrize("case", _params("eval.jsonl"))
def test_eval_case(case: dict) -> None:
    want = case["expect"]
    if "parse_error" in want:
        with pytest.raises(classad.ClassAdParseError):
            classad.ExprTree(case["expr"])
        return
    scope = classad.ClassAd(case["ad"]) if case["ad"] else classad.ClassAd()
    target = classad.ClassAd(case["target"]) if case["target"] else None
    tree = classad.ExprTree(case["expr"])
    assert unparse_expr(tree.node) == case["unparse"]
    got = typed(tree.evaluate(scope, target), _attr_in(scope, target))
    assert same(got, want), f"got {got}, want {want}"


@pytest.mark.parametrize("case", _params("match.jsonl"))
def test_match_case(case: dict) -> None:
    left, right = classad.ClassAd(case["left"]), classad.ClassAd(case["right"])
    want = case["expect"]
    assert left.matches(right) == want["left_matches_right"]
    assert right.matches(left) == want["right_matches_left"]
    assert left.symmetricMatch(right) == want["symmetric_match"]
    for side, ad, other in (("left", left, right), ("right", right, left)):
        for attr in ("requirements", "rank"):
            got = typed(ad.evaluate(attr, other), _attr_in(ad, other))
            assert same(got, want[f"{side}_{attr}"]), f"{side} {attr}: got {got}"


def _parse(case: dict):
    text, form = case["text"], case["format"]
    if form == "new":
        return classad.ClassAd(text)
    if form == "json":
        return classad.parseNext(text, classad.ParserType.JSON)
    return classad.parseOne(text, classad.ParserType.Old)


@pytest.mark.parametrize("case", _params("parse.jsonl"))
def test_parse_case(case: dict) -> None:
    want = case["expect"]
    if want.get("error"):
        with pytest.raises((classad.ClassAdParseError, StopIteration)):
            _parse(case)
        return
    ad = _parse(case)
    assert sorted(ad) == sorted(want["attrs"])
    for name, expected in want["attrs"].items():
        assert unparse_expr(ad.expression(name)) == expected["unparse"], name
        got = typed(ad.evaluate(name), _attr_in(ad, None))
        assert same(got, expected["value"]), f"{name}: got {got}"
