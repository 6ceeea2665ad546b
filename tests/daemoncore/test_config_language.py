"""The configuration language: statements, references, conditionals, includes and templates."""

from __future__ import annotations

import pytest

from daemoncore.config import Config, ConfigError


def load(text: str, **env: str) -> Config:
    return Config.from_text(text, env={"HOME": "/home/alice", **env}, source="pool.conf", hostname="cm.example.org")


def test_later_assignment_wins_and_names_ignore_case():
    """A name set twice in any case keeps the last value and its first spelling."""
    config = load("Update_Interval = 10\nUPDATE_INTERVAL = 20\nfoo=bar\n")
    assert config.param("update_interval") == "20"
    assert config.lookup("UPDATE_INTERVAL").origin.line == 2
    assert config.param("FOO") == "bar"


def test_values_are_stripped_and_may_be_empty():
    """Whitespace around a value is dropped, and an empty value reads as the default."""
    config = load("A =    spaced out   \nB =\n")
    assert config.param("A") == "spaced out"
    assert config.param("B", "fallback") == "fallback"
    assert "B" in config


def test_comment_lines_are_skipped_but_hash_inside_a_value_is_kept():
    """Only lines starting with # are comments, as in HTCondor."""
    config = load("# a comment\n   # indented comment\nA = x # not a comment\n")
    assert config.param("A") == "x # not a comment"


def test_backslash_continues_a_line():
    """A trailing backslash joins the next line, skipping comment lines in between."""
    config = load("DAEMON_LIST = MASTER, \\\n    COLLECTOR, \\\n# STARTD, \\\n    SCHEDD\nNEXT = 1\n")
    assert config.param_list("DAEMON_LIST") == ["MASTER", "COLLECTOR", "SCHEDD"]
    assert config.param("NEXT") == "1"
    assert config.lookup("DAEMON_LIST").origin.line == 1


def test_multiline_value_between_tags():
    """``NAME @=TAG`` keeps every line up to ``@TAG`` verbatim."""
    config = load("SCRIPT @=end\n  line one\n  $(X)\n@end\nX = two\n")
    assert config.param("SCRIPT") == "line one\n  two"


def test_unclosed_multiline_value_names_its_first_line():
    """A ``@=`` block without its end tag is an error at the line that opened it."""
    with pytest.raises(ConfigError) as err:
        load("A = 1\nSCRIPT @=end\nline\n")
    assert err.value.line == 2
    assert "pool.conf, line 2" in str(err.value)
    assert "'@end'" in str(err.value)


def test_references_expand_lazily_at_lookup():
    """``$(NAME)`` sees the final value of NAME, even one set later."""
    config = load("LOG = $(LOCAL_DIR)/log\nLOCAL_DIR = /srv/pool\n")
    assert config.param("LOG") == "/srv/pool/log"


def test_reference_default_is_used_when_undefined_or_empty():
    """``$(NAME:default)`` falls back when NAME is unset or empty; plain ``$(NAME)`` gives ''."""
    config = load("EMPTY =\nA = $(MISSING:one)-$(EMPTY:two)-$(MISSING)-$(X:$(Y))\nY = why\n")
    assert config.param("A") == "one-two--why"


def test_env_reference_reads_the_given_environment():
    """``$ENV(NAME)`` expands from the environment the config was built with, with a default."""
    config = load("A = $ENV(POOL_ROOT)/x\nB = $ENV(NOPE:none)\n", POOL_ROOT="/data")
    assert config.param("A") == "/data/x"
    assert config.param("B") == "none"


def test_double_dollar_and_other_functions_stay_verbatim():
    """``$$(Attr)`` is for match time and unknown ``$FUNC()`` calls are left as written."""
    config = load("A = $$(OpSys) $RANDOM_CHOICE(1,2) $ cost\n")
    assert config.param("A") == "$$(OpSys) $RANDOM_CHOICE(1,2) $ cost"


def test_self_reference_appends_to_the_previous_value():
    """``NAME = $(NAME), more`` extends what NAME held before, as HTCondor does."""
    config = load("DAEMON_LIST = $(DAEMON_LIST), STARTD\n")
    assert config.param_list("DAEMON_LIST") == ["MASTER", "STARTD"]


def test_reference_cycle_is_a_clear_error():
    """Values that refer to each other raise an error naming the loop and the line."""
    config = load("A = $(B)\nB = x$(C)\nC = $(A)\n")
    with pytest.raises(ConfigError) as err:
        config.param("A")
    assert "A -> B -> C -> A" in str(err.value)
    assert err.value.source == "pool.conf" and err.value.line == 1


def test_unclosed_reference_is_a_syntax_error_at_its_line():
    """A ``$(`` without ``)`` is reported when read, at the line that set it."""
    with pytest.raises(ConfigError) as err:
        load("A = 1\nB = $(LOCAL_DIR/x\n")
    assert err.value.line == 2
    assert "closing ')'" in str(err.value)


def test_garbage_line_says_what_was_expected():
    """A line that is no statement names file, line and the accepted forms."""
    with pytest.raises(ConfigError) as err:
        load("A = 1\n\nthis is not config\n")
    assert str(err.value).startswith("pool.conf, line 3: expected 'NAME = value'")
    assert "'this is not config'" in str(err.value)


@pytest.mark.parametrize(("test", "taken"), [
    ("defined A", True), ("defined NOPE", False), ("! defined NOPE", True),
    ("true", True), ("FALSE", False), ("yes", True), ("no", False), ("1", True), ("0", False),
    ("version >= 0.1", True), ("version < 0.0.1", False), ("version > 99.0", False),
    ("version != 99", True), ("$(A)", True), ("$(OFF)", False),
])
def test_if_tests(test, taken):
    """Each accepted ``if`` test chooses the branch HTCondor would."""
    config = load(f"A = yes\nOFF = false\nif {test}\n  R = then\nelse\n  R = else\nendif\n")
    assert config.param("R") == ("then" if taken else "else")


def test_elif_takes_the_first_true_branch_only():
    """Once a branch is taken, later ``elif`` and ``else`` branches are skipped."""
    config = load("if false\nR = 1\nelif true\nR = 2\nelif true\nR = 3\nelse\nR = 4\nendif\n")
    assert config.param("R") == "2"


def test_nested_if_inside_a_skipped_branch_is_skipped():
    """An ``if`` inside a false branch is not evaluated, even if it would be true."""
    config = load("if false\n  if true\n    R = inner\n  endif\nelse\n  R = outer\nendif\n")
    assert config.param("R") == "outer"


def test_defined_sees_only_what_was_set_before():
    """``defined`` is decided while reading, so a later assignment does not count."""
    config = load("if defined LATER\nR = early\nendif\nLATER = 1\n")
    assert "R" not in config


def test_defined_knows_built_in_defaults():
    """Defaults are set before any file, so ``defined UPDATE_INTERVAL`` is true."""
    config = load("if defined UPDATE_INTERVAL\nR = 1\nendif\n")
    assert config.param("R") == "1"


@pytest.mark.parametrize(("text", "line", "words"), [
    ("if true\nA = 1\n", 1, "never closed"),
    ("A = 1\nendif\n", 2, "without an open 'if'"),
    ("if true\nelse\nelif true\nendif\n", 3, "after 'else'"),
    ("if\nendif\n", 1, "needs a test"),
    ("if maybe so\nendif\n", 1, "cannot decide 'if maybe so'"),
])
def test_bad_conditionals_name_the_line(text, line, words):
    """Unbalanced or undecidable conditionals are errors at the offending line."""
    with pytest.raises(ConfigError) as err:
        load(text)
    assert err.value.line == line
    assert words in str(err.value)


def test_knob_named_like_a_keyword_is_an_assignment():
    """``IF = 3`` sets a knob rather than opening a conditional."""
    assert load("IF = 3\n").param("IF") == "3"


def test_use_role_personal_sets_the_role_knobs_with_its_origin():
    """``use ROLE : Personal`` sets DAEMON_LIST and friends, recorded at the use line."""
    config = load("A = 1\nuse role : personal\n")
    value = config.lookup("DAEMON_LIST")
    assert config.param_list("DAEMON_LIST")[:2] == ["MASTER", "COLLECTOR"]
    assert config.param("NETWORK_INTERFACE") == "127.0.0.1"
    assert value.origin.line == 2 and value.origin.via == "use ROLE:personal"
    assert value.origin.describe() == "at pool.conf, line 2 (use ROLE:personal)"


def test_later_lines_override_a_template():
    """A value set after ``use`` wins over the template's."""
    config = load("use ROLE : Personal\nDAEMON_LIST = MASTER\n")
    assert config.param("DAEMON_LIST") == "MASTER"


def test_use_several_templates_in_one_line():
    """``use ROLE : CentralManager, Submit`` applies each template in turn."""
    config = load("DAEMON_LIST = MASTER\nuse ROLE : CentralManager, Submit\n")
    assert config.param_list("DAEMON_LIST") == ["MASTER", "COLLECTOR", "NEGOTIATOR", "SCHEDD"]


def test_unknown_template_lists_the_known_ones():
    """An unknown template is an error at its line that names the available templates."""
    with pytest.raises(ConfigError) as err:
        load("use ROLE : Wizard\n")
    assert err.value.line == 1
    assert "ROLE:Personal" in str(err.value)
