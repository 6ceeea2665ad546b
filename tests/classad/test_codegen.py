"""Generated functions (classad.codegen) answer exactly as the closures they replace,
for every shape they write out and for the cases they hand back to the closures."""

from __future__ import annotations

import itertools

import pytest

from classad import ClassAd, codegen
from classad import evaluate as ev
from classad.parser import parse_expression
from classad.values import ERROR, UNDEFINED

EXPRESSIONS = [
    "TARGET.Memory >= RequestMemory",
    "TARGET.Arch == \"x86_64\" && TARGET.OpSys == \"LINUX\"",
    "(TARGET.Disk >= RequestDisk) && (TARGET.Cpus >= RequestCpus) || TARGET.HasFileTransfer",
    "MY.Memory > 10 || TARGET.Memory < 10",
    "TARGET.KFlops / 1000 + TARGET.Memory / 1024",
    "Memory - 3 * Cpus",
    "Memory % 7 + -Cpus",
    "TARGET.Owner =!= \"user3\" && TARGET.RequestMemory <= MY.Memory",
    "Name =?= TARGET.Name",
    "!HasFileTransfer && Memory != 5",
    "Memory + 1 > Cpus",
    "(Start) && (TARGET.RequestMemory <= Memory)",
    "Memory & 6 | Cpus",
    "TARGET.Name == Name",
    "target.memory >= my.memory",
    "Missing + 1 >= 0 || Missing",
    "9223372036854775807 + Memory",
    "-9223372036854775807 - Memory * 2",
    "Memory / 0 == Memory / Zero",
    "Real / 2 > Memory / -2",
]

ADS = [
    '[ Memory = 2048; Cpus = 4; Disk = 100; Arch = "X86_64"; OpSys = "LINUX"; Name = "a"; '
    'KFlops = 900000; HasFileTransfer = true; Owner = "user3"; RequestMemory = 512; '
    'RequestDisk = 10; RequestCpus = 1; Zero = 0; Real = 7.5; Start = Memory > 1000 ]',
    '[ Memory = "lots"; Cpus = undefined; Disk = error; Arch = "arm"; Name = "A"; '
    'HasFileTransfer = 1; Owner = "user1"; RequestMemory = Memory * 2; Start = false; Real = -1 ]',
    '[ Memory = -5; Cpus = 2.5; target = [ Memory = 1 ]; my = 3; Name = undefined; '
    'HasFileTransfer = "yes"; Zero = 0.0; Real = 0.0 ]',
    '[ ]',
]


def _same(a, b) -> bool:
    if type(a) is float and type(b) is float and a != a and b != b:
        return True
    return type(a) is type(b) and (a == b or a is b)


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_generated_function_answers_as_the_closures(text):
    node = parse_expression(text)
    generated = codegen.generate(node, ev.compile_expr, ev._GENERATED_RUNTIME)
    assert generated is not None
    closure = ev._compile_binary_closure(node)
    ads = [ClassAd(t) for t in ADS]
    for my, target in itertools.product(ads, ads + [None]):
        ctx = ev.Context(my, my, target, {})
        want = closure(ev.Context(my, my, target, {}))
        got = generated(ctx)
        assert _same(got, want), (text, my, target, got, want)


def test_big_expressions_keep_their_closures():
    text = " || ".join(f"Name == \"n{i}\"" for i in range(200))
    assert codegen.generate(parse_expression(text), ev.compile_expr, ev._GENERATED_RUNTIME) is None
    ad = ClassAd('[ Name = "n150" ]')
    assert ev.evaluate(parse_expression(text), ad) is True


def test_each_shape_is_compiled_once():
    before = codegen._factory_cached.cache_info().misses
    for i in range(5):
        codegen.generate(parse_expression(f"TARGET.Memory >= {1000 + i} && Cpus > {i}"),
                         ev.compile_expr, ev._GENERATED_RUNTIME)
    assert codegen._factory_cached.cache_info().misses - before <= 3  # the whole, and the two sides


def test_reference_cycles_and_errors_pass_through_generated_code():
    ad = ClassAd('[ a = b + 1; b = a + 1; c = 1 / 0 > 2; d = "x" < 3 ]')
    assert ad.evaluate("a") is UNDEFINED
    assert ad.evaluate("c") is ERROR
    assert ad.evaluate("d") is ERROR
