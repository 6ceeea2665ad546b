"""No expression, ad or text can freeze or crash whoever evaluates it: regular
expressions have a time budget, built strings and lists have a size bound, attribute
values are remembered within one evaluation, and one depth limit holds for parse,
compile, evaluate and print (issue 9)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import classad
from classad import ClassAd, ClassAdParseError, ExprTree, limits
from classad.textforms import ParserType, parse_ads
from classad.values import ERROR

EVIL = '"' + "a" * 40 + '!"'


# --- regular expressions ------------------------------------------------------

@pytest.mark.parametrize("expr", [
    f'regexp("^(a|aa)+$", {EVIL})',
    f'regexpMember("^(a|aa)+$", {{ "x", {EVIL} }})',
    f'regexps("^(a|aa)+$", {EVIL}, "x")',
    f'replace("^(a|aa)+$", {EVIL}, "x")',
    f'replaceAll("^(a|aa)+$", {EVIL}, "x")',
    f'stringList_regexpMember("^(a|aa)+$", {EVIL})',
])
def test_backtracking_pattern_is_error_not_a_freeze(expr: str) -> None:
    """A pattern that backtracks without end evaluates to ERROR within its budget."""
    assert ExprTree(expr).evaluate() is ERROR


def test_backtracking_pattern_in_requirements_does_not_match() -> None:
    """In a job's Requirements the same pattern makes the match fail, not hang."""
    job = ClassAd(f'[ Requirements = regexp("^(a|aa)+$", TARGET.Name) ]')
    machine = ClassAd(f'[ Name = {EVIL}; Requirements = true ]')
    assert not job.symmetricMatch(machine)


def test_pattern_options_still_apply() -> None:
    """PCRE option letters keep their meaning with the time-bounded engine."""
    assert ExprTree('regexp("^B$", "a\\nb", "im")').eval() is True
    assert ExprTree('regexp("a.b", "a\\nb", "s")').eval() is True
    assert ExprTree('regexp("a b # comment", "ab", "x")').eval() is True
    assert ExprTree('replaceAll("(o)", "foo", "<\\\\1>")').eval() == "f<o><o>"


def test_regex_timeout_is_settable() -> None:
    """CLASSAD_REGEX_TIMEOUT can be changed, and must be positive."""
    before = limits.REGEX_TIMEOUT
    try:
        limits.set_regex_timeout(0.2)
        assert limits.REGEX_TIMEOUT == 0.2
        with pytest.raises(ValueError, match="CLASSAD_REGEX_TIMEOUT"):
            limits.set_regex_timeout(0)
    finally:
        limits.set_regex_timeout(before)


# --- sizes and memoisation ------------------------------------------------------

def _chain(template: str, first: str, n: int = 40) -> ClassAd:
    attrs = [f"x0 = {first}"] + [template.format(i=i, p=i - 1) for i in range(1, n + 1)]
    return ClassAd("[ " + "; ".join(attrs) + " ]")


def test_nested_replace_all_past_the_string_bound_is_error() -> None:
    """replaceAll nested to build 10^10 characters gives ERROR, not memory exhaustion."""
    a100 = '"' + "a" * 100 + '"'
    expr = a100
    for _ in range(5):
        expr = f'replaceAll("a", {expr}, {a100})'
    assert ExprTree(expr).evaluate() is ERROR


def test_doubling_strcat_chain_is_error_past_the_bound() -> None:
    """``x_i = strcat(x_{i-1}, x_{i-1})`` to 40 levels is ERROR, quickly."""
    ad = _chain("x{i} = strcat(x{p}, x{p})", '"ab"')
    assert ad.evaluate("x40") is ERROR
    assert len(ad.eval("x20")) == 2 << 20


def test_doubling_sum_chain_is_evaluated_once_per_attribute() -> None:
    """``a_i = a_{i-1} + a_{i-1}`` to 40 levels: 2^40 paths, 41 evaluations."""
    assert _chain("x{i} = x{p} + x{p}", "1").eval("x40") == 1 << 40


def test_doubling_list_chain_is_bounded() -> None:
    """Lists that share sublists cannot grow past MAX_LIST elements, and print."""
    ad = _chain("x{i} = {{ x{p}, x{p} }}", "{ 1 }")
    value = ad.evaluate("x40")
    assert ERROR in value
    assert len(ExprTree("string(x40)").eval(ad)) < 100


def test_flatten_of_doubling_references_is_quick() -> None:
    """flatten evaluates a doubling chain once per attribute too."""
    ad = _chain("x{i} = x{p} + x{p}", "1")
    assert str(ad.flatten(ExprTree("x40 + y"))) == f"{1 << 40} + y"
    strings = _chain("x{i} = strcat(x{p}, x{p})", '"ab"')
    assert str(strings.flatten(ExprTree("x40 + y"))) == "error + y"


@pytest.mark.parametrize("expr", [
    'strcat(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s)',
    'join(s, { s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s })',
    'listToArgs({ s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s })',
])
def test_builders_refuse_strings_past_the_bound(expr: str) -> None:
    """strcat, join and listToArgs give ERROR rather than build more than 16 MiB."""
    ad = ClassAd({"s": "x" * (1 << 20)})
    assert ExprTree(expr).evaluate(ad) is ERROR


def test_cycles_still_give_undefined_with_memoisation() -> None:
    """Past the memo threshold a reference cycle still evaluates to UNDEFINED."""
    ad = _chain("x{i} = x{p} + x{p}", "y")
    ad["y"] = ExprTree("x40")
    assert ad.eval("x40") is classad.Value.Undefined


# --- depth --------------------------------------------------------------------

DEEP = limits.MAX_DEPTH - 1
NESTS = {
    "unary": ("-" * DEEP + "1", "-" * (DEEP + 200) + "1"),
    "paren": ("(" * DEEP + "1" + ")" * DEEP, "(" * (DEEP + 200) + "1" + ")" * (DEEP + 200)),
    "list": ("{" * DEEP + "}" * DEEP, "{" * (DEEP + 190) + "}" * (DEEP + 190)),
    "record": ("[a=" * (DEEP - 1) + "1" + "]" * (DEEP - 1), "[a=" * 250 + "1" + "]" * 250),
    "call": ("strcat(" * DEEP + '"x"' + ")" * DEEP, "strcat(" * 400 + '"x"' + ")" * 400),
    "ternary": ("true ? " * DEEP + "1" + " : 2" * DEEP, "true ? " * 400 + "1" + " : 2" * 400),
}


@pytest.mark.parametrize("kind", sorted(NESTS))
def test_deepest_accepted_nest_compiles_evaluates_and_prints(kind: str) -> None:
    """Anything the parser accepts evaluates and prints in every text form."""
    text = NESTS[kind][0]
    tree = ExprTree(text)
    tree.evaluate()
    ad = ClassAd({"a": tree})
    assert ad.printOld() and ad.printJson() and str(ad) and ad.unparse() and str(tree)
    again = next(parse_ads(ad.printJson(), ParserType.JSON))
    assert again.unparse() == ad.unparse()


@pytest.mark.parametrize("kind", sorted(NESTS))
def test_deeper_nest_is_a_parse_error(kind: str) -> None:
    """One level too many is refused at parse time, in new syntax and in JSON."""
    with pytest.raises(ClassAdParseError, match="nested"):
        ExprTree(NESTS[kind][1])


def test_deep_json_ad_is_a_parse_error() -> None:
    """A JSON ad nested past the limit, by arrays or by an embedded expression, is refused."""
    with pytest.raises(ClassAdParseError, match="nested"):
        list(parse_ads('{"a": ' + "[" * 300 + "]" * 300 + "}", ParserType.JSON))
    inner = "-" * DEEP + "1"
    with pytest.raises(ClassAdParseError, match="nested"):
        list(parse_ads('{"a": [[["\\/Expr(' + inner + ')\\/"]]]}', ParserType.JSON))


@pytest.mark.parametrize("terms", [500, 5000])
@pytest.mark.parametrize("op", ["||", "&&", "+", "=="])
def test_flat_chains_are_not_depth(terms: int, op: str) -> None:
    """A machine list of thousands of ``||`` terms parses, evaluates and prints."""
    text = f" {op} ".join(f'(Machine == "m{i}")' for i in range(terms))
    tree = ExprTree(text)
    ad = ClassAd({"Machine": f"m{terms - 1}", "Requirements": tree})
    value = ad.evaluate("Requirements")
    if op == "||":
        assert value is True
    if op == "&&":
        assert value is False
    assert str(ExprTree(str(tree))) == str(tree)
    assert ad.printOld() and ad.printJson()
    assert ad.externalRefs(tree) == [] and ad.internalRefs(tree) == ["Machine"]
    assert str(ClassAd().flatten(tree)).startswith('(Machine == "m0")')


def test_deep_python_value_is_refused() -> None:
    """A Python value nested past the limit cannot be stored in an ad."""
    value: list = []
    for _ in range(limits.MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(ValueError, match="nested"):
        ClassAd({"a": value})


# --- literals -----------------------------------------------------------------

@pytest.mark.parametrize("form", ["new", "old", "json"])
def test_huge_integer_literal_is_a_parse_error(form: str) -> None:
    """An integer literal of 5,000 digits is a clear parse error in all three forms."""
    digits = "9" * 5000
    text = {"new": f"[ a = {digits} ]", "old": f"a = {digits}\n", "json": f'{{"a": {digits}}}'}[form]
    with pytest.raises(ClassAdParseError, match="5000 digits"):
        list(parse_ads(text))


def test_out_of_range_integer_literal_is_zero_as_in_htcondor() -> None:
    """A literal past 64 bits but within the bound becomes 0, as HTCondor does."""
    assert ExprTree("9" * 50).eval() == 0


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\ud800x", "\\ud800\\u0041"])
def test_lone_surrogate_in_json_is_a_parse_error(escape: str) -> None:
    """A lone UTF-16 surrogate is not a character: the JSON ad is refused."""
    with pytest.raises(ClassAdParseError, match="surrogate"):
        list(parse_ads(f'{{"a": "{escape}"}}', ParserType.JSON))


def test_surrogate_pair_in_json_is_one_character() -> None:
    """A proper surrogate pair decodes to the character it encodes."""
    ad = next(parse_ads('{"a": "\\ud83d\\ude00"}', ParserType.JSON))
    assert ad["a"] == "\U0001F600"


# --- probes -------------------------------------------------------------------

ATOMS = ["1", "-2", "2.5", '"s"', "true", "undefined", "error", "a", "b", "x", "l", "r.a",
         "9" * 30, "9" * 2000, '"' + "z" * 200 + '"']
BINARY = ["||", "&&", "+", "-", "*", "/", "%", "==", "!=", "<", ">=", "=?=", "=!=", "&", "|", "<<", ">>>"]
CALLS = ["strcat", "size", "regexp", "replaceAll", "join", "split", "toUpper", "substr", "ifThenElse",
         "member", "sum", "stringListMember", "eval", "unparse", "string", "int", "real"]


@st.composite
def expressions(draw, depth: int = 0):
    if depth > 6 or draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(ATOMS))
    kind = draw(st.integers(0, 7))
    sub = lambda: draw(expressions(depth + 1))  # noqa: E731 - local shorthand
    if kind == 0:
        return f" {draw(st.sampled_from(BINARY))} ".join(sub() for _ in range(draw(st.integers(2, 40))))
    if kind == 1:
        return f"{draw(st.sampled_from('-!~+'))}{sub()}"
    if kind == 2:
        return f"({sub()})"
    if kind == 3:
        return "{" + ", ".join(sub() for _ in range(draw(st.integers(0, 4)))) + "}"
    if kind == 4:
        return f"{sub()} ? {sub()} : {sub()}"
    if kind == 5:
        return f"{draw(st.sampled_from(CALLS))}({', '.join(sub() for _ in range(draw(st.integers(0, 3))))})"
    if kind == 6:
        return "[ a = " + sub() + "; b = " + sub() + " ]"
    n = draw(st.integers(150, 260))
    return draw(st.sampled_from(["-" * n + "1", "(" * n + "1" + ")" * n, "{" * n + "}" * n]))


def _mutate(text: str, edits) -> str:
    for pos, cut, insert in edits:
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + cut:]
    return text


MUTATION = st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 4),
                              st.sampled_from(["", "(", ")", "{", "}", "[", "]", ";", '"', "\\", "9" * 40,
                                               "\\ud800", ",", "=", "||", "-"])), max_size=3)
SCOPE = "[ a = 1; b = a + 1; x = x; l = { 1, 2 }; r = [ a = 3 ]; s = strcat(s, s) ]"


def _survives(text: str, form: ParserType) -> None:
    """``text`` parses or is refused with ClassAdParseError; what parses evaluates,
    matches and prints in every form without any exception."""
    try:
        ads = list(parse_ads(text, form))
    except ClassAdParseError:
        return
    scope = ClassAd(SCOPE)
    for ad in ads:
        for name in ad:
            ad.evaluate(name, scope)
        ad.symmetricMatch(scope)
        assert isinstance(ad.printOld() + ad.printJson() + str(ad) + ad.unparse(), str)


PROBE = settings(max_examples=60, deadline=10000, suppress_health_check=[HealthCheck.too_slow])


@PROBE
@given(expressions(), MUTATION)
def test_probe_new_syntax(expr: str, edits) -> None:
    """Random and mutated new-syntax ads never escape as anything but ClassAdParseError."""
    _survives(_mutate(f"[ Requirements = {expr}; Rank = a ]", edits), ParserType.New)


@PROBE
@given(expressions(), MUTATION)
def test_probe_old_syntax(expr: str, edits) -> None:
    """The same for old-syntax ads (one ``Name = expr`` per line)."""
    _survives(_mutate(f"Requirements = {expr}\nRank = a\n", edits), ParserType.Old)


@PROBE
@given(expressions(), MUTATION)
def test_probe_json(expr: str, edits) -> None:
    """The same for JSON ads, expressions embedded as ``\\/Expr(...)\\/`` strings."""
    body = expr.replace("\\", "\\\\").replace('"', '\\"')
    _survives(_mutate(f'{{"Requirements": "\\/Expr({body})\\/", "n": [1, {{"m": 2}}]}}', edits),
              ParserType.JSON)


def test_a_pattern_over_the_length_bound_is_invalid_and_long_ones_are_not_kept():
    """A pattern longer than MAX_PATTERN is refused as invalid (compiling has no budget);
    one between the two bounds still works but is not kept compiled."""
    from classad.functions import regex as rx

    long_pattern = "a" * (rx.MAX_CACHED_PATTERN + 1)
    before = rx._cached.cache_info().currsize
    assert rx.compile_pattern(long_pattern, "") is not None
    assert rx._cached.cache_info().currsize == before
    assert rx.compile_pattern("a" * (rx.MAX_PATTERN + 1), "") is None
