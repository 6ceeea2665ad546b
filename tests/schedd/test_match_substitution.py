"""Match-time ``$$()`` substitution (schedd.match_substitution), written from HTCondor's
rules: condor_submit.rst "$$(attribute)" / "$$([expression])" macros, qmgmt.cpp
``dollarDollarExpand`` (what is expanded, MATCH_ and MATCH_EXP_ attributes, the hold
reason) and config.cpp ``next_config_macro`` with ``is_dollardollar_prefix`` (how a
macro is found). The last tests drive the schedd's activation on task.Clock."""

from classad import ClassAd, ExprTree
from jobmodel.states import JobStatus
from schedd.match_substitution import expand_match_macros, next_macro
from tests.schedd.test_execution import activation, execution, schedd, start_one  # noqa: F401 (fixtures)

MACHINE = ClassAd({"OpSys": "LINUX", "Arch": "X86_64", "Cpus": 8, "Memory": 4096, "Name": "slot1@node1"})


def job(**attrs):
    ad = ClassAd({"Cmd": "/bin/run", "Owner": "alice"})
    for name, value in attrs.items():
        ad[name] = value
    return ad


def test_attribute_macros_take_the_machines_values_in_string_attributes():
    """condor_submit.rst "$$(attribute)": a machine attribute's value replaces the macro;
    a string value goes in without its quotes (dollarDollarExpand strips them)."""
    result = expand_match_macros(job(Arguments="-n $$(Cpus) on $$(OpSys)"), MACHINE)
    assert result.hold_reason is None
    assert result.ad["Arguments"] == "-n 8 on LINUX"


def test_cmd_is_expanded_too_and_the_stored_job_keeps_its_macros():
    """dollarDollarExpand expands Cmd first and works on a copy: the job ad given keeps its text."""
    original = job(Cmd="/bin/prog.$$(OpSys).$$(Arch)")
    result = expand_match_macros(original, MACHINE)
    assert result.ad["Cmd"] == "/bin/prog.LINUX.X86_64"
    assert original["Cmd"] == "/bin/prog.$$(OpSys).$$(Arch)"


def test_a_job_without_macros_is_run_as_it_is_and_records_nothing():
    """No attribute's text holds $$: the job's own ad runs, nothing is recorded."""
    ad = job(Arguments="-n 8 costs $5", Requirements=ExprTree('TARGET.Memory > 10 && Arch == "X86_64"'),
             RequestCpus=2)
    result = expand_match_macros(ad, MACHINE)
    assert result.ad is ad and result.recorded == {} and result.hold_reason is None


def test_a_macro_inside_an_expression_is_found_and_expanded():
    """A macro in a string inside an expression (not a literal) is found when the
    expression is printed, and expanded."""
    result = expand_match_macros(job(Description=ExprTree('strcat("on ", "$$(OpSys)")'), RequestCpus=1), MACHINE)
    assert result.ad["Description"].eval() == "on LINUX"
    assert result.recorded["MATCH_OpSys"] == '"LINUX"'


def test_match_attributes_record_the_machine_values_and_the_expansion():
    """dollarDollarExpand: MATCH_<Attr> keeps the machine attribute's expression, and
    MATCH_EXP_<JobAttr> the attribute's expanded text."""
    result = expand_match_macros(job(Arguments="$$(Cpus) $$(OpSys)"), MACHINE)
    assert result.recorded == {"MATCH_Cpus": "8", "MATCH_OpSys": '"LINUX"', "MATCH_EXP_Arguments": '"8 LINUX"'}


def test_a_default_is_used_when_the_machine_lacks_the_attribute():
    """condor_submit.rst: $$(Attr:default) uses default when the machine ad has no Attr;
    the default is recorded as a string MATCH_<Attr> (dollarDollarExpand)."""
    result = expand_match_macros(job(Environment="SCRATCH=$$(Scratch:/tmp)"), MACHINE)
    # '/' is not a character next_config_macro allows after the colon: not a macro at all
    assert result.ad["Environment"] == "SCRATCH=$$(Scratch:/tmp)"
    result = expand_match_macros(job(Environment="SITE=$$(Site:unknown) N=$$(Cpus:1)"), MACHINE)
    assert result.ad["Environment"] == "SITE=unknown N=8"
    assert result.recorded["MATCH_Site"] == '"unknown"'


def test_an_expression_macro_is_evaluated_in_the_job_against_the_machine():
    """condor_submit.rst "$$([expression])": the expression is evaluated with the machine ad
    as TARGET and its string() value replaces the macro; quotes inside it are written
    escaped in the job's string and read unescaped (dollarDollarExpand)."""
    result = expand_match_macros(job(RequestMemory=1000, Arguments='$$([ TARGET.Memory - MY.RequestMemory ]) '
                                     '$$([ strcat("x", OpSys) ])'), MACHINE)
    assert result.ad["Arguments"] == "3096 xLINUX"


def test_an_unresolvable_macro_holds_the_job_naming_it():
    """dollarDollarExpand: an attribute the machine lacks (no default), a name with a dot, or an
    expression whose string() is undefined gives 'Cannot expand $$ expression (name).'"""
    for text, name in (("$$(NoSuch)", "NoSuch"), ("$$(a.b)", "a.b"), ("$$([ NoSuch ])", "[ NoSuch ]")):
        result = expand_match_macros(job(Arguments=text), MACHINE)
        assert result.ad is None
        assert result.hold_reason == f"Cannot expand $$ expression ({name})."


def test_dollardollar_gives_two_dollars_and_values_are_not_expanded_again():
    """$$(DOLLARDOLLAR) is a literal $$; scanning resumes after a replacement, so a machine
    value holding a macro stays as it is (dollarDollarExpand's search_pos)."""
    machine = ClassAd({"Weird": "$$(Cpus)", "Cpus": 2})
    result = expand_match_macros(job(Arguments="$$(DOLLARDOLLAR)(Cpus) $$(Weird)"), machine)
    assert result.ad["Arguments"] == "$$(Cpus) $$(Cpus)"


def test_match_attributes_are_never_expanded():
    """MATCH_* attributes hold earlier expansions and are left as they are."""
    result = expand_match_macros(job(MATCH_EXP_Arguments="$$(NoSuch)"), MACHINE)
    assert result.hold_reason is None and result.ad["MATCH_EXP_Arguments"] == "$$(NoSuch)"


def test_macros_are_found_as_next_config_macro_finds_them():
    """Exactly two dollars then '(' ; a '[' body runs to the first '])'; an unclosed body is
    skipped and scanning goes on (is_dollardollar_prefix, next_config_macro)."""
    assert next_macro("a $(Cpus) $$$(Cpus) b", 0) is None
    found = next_macro("$$(Oops $$(Cpus)", 0)
    assert found.body == "Cpus" and found.start == 8
    assert next_macro("$$([ a[0] ]) z", 0).body == "[ a[0] ]"
    assert next_macro("$$([ no end", 0) is None


def test_non_string_expressions_are_left_alone():
    """Only text that holds a macro changes; other attributes are untouched."""
    ad = job(RequestCpus=2)
    ad["Requirements"] = ExprTree("TARGET.Cpus >= RequestCpus")
    result = expand_match_macros(ad, MACHINE)
    assert result.recorded == {} and result.ad == ad


def test_activation_sends_the_expanded_ad_and_stores_the_match_attributes(execution, schedd):  # noqa: F811
    """The schedd expands at activation (GetExpandedJobAd at claim activation): the startd gets
    the substituted ad and the queued job keeps MATCH_* attributes and its macros."""
    [job_id] = start_one(execution, schedd, Arguments="--threads $$(Cpus) $$(Site:here)")
    assert activation(schedd)["job_ad"]["Arguments"] == "--threads 1 here"
    stored = schedd.queue.get_job(job_id)
    assert stored["Arguments"] == "--threads $$(Cpus) $$(Site:here)"
    assert stored["MATCH_Cpus"] == 1 and stored["MATCH_EXP_Arguments"] == "--threads 1 here"


def test_activation_holds_a_job_whose_macro_the_slot_cannot_resolve(execution, schedd):  # noqa: F811
    """A macro the slot cannot resolve holds the job with HTCondor's reason, nothing is
    activated and the claim is given back."""
    [job_id] = start_one(execution, schedd, Arguments="$$(GPUs_Capability)")
    assert schedd.startd.named("activate") == []
    stored = schedd.queue.get_job(job_id)
    assert stored["JobStatus"] == int(JobStatus.HELD)
    assert stored["HoldReason"] == "Cannot expand $$ expression (GPUs_Capability)."
    assert stored["HoldReasonCode"] == 0
    assert job_id not in execution.shadows
    assert len(schedd.startd.named("release")) == 1
