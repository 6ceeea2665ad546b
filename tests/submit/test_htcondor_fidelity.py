"""Submit commands checked against HTCondor's own rules (SubmitHash in
src/condor_utils/submit_utils.cpp and the condor_submit manual page), one rule a test;
each docstring names where the rule is."""

from __future__ import annotations

import warnings

import pytest

from bindings.submit import Submit
from schedd.submit import SubmitError


def job(text: str, executable: str = "/bin/true"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return next(iter(Submit(f"executable = {executable}\n{text}\nqueue\n").jobs(owner="alice")))


def refused(text: str) -> str:
    with pytest.raises(SubmitError) as info:
        job(text)
    return str(info.value)


def expr(ad, name: str) -> str:
    return str(ad.lookup(name))


# --- GPUs: SubmitHash::SetRequestGpus and SubmitHash::SetResourceRequirements ---------

def test_require_gpus_keeps_its_own_test_of_a_property():
    """SetResourceRequirements: a gpus_minimum_/maximum_ clause is left out when
    require_gpus already refers to that GPU property; the attribute is still set."""
    ad = job("request_gpus = 1\nrequire_gpus = Capability > 7\ngpus_minimum_capability = 8\n"
             "gpus_minimum_memory = 4G")
    assert expr(ad, "RequireGPUs") == "Capability > 7 && GlobalMemoryMb >= GPUsMinMemory"
    assert ad["GPUsMinCapability"] == 8
    assert ad["GPUsMinMemory"] == 4096


def test_require_gpus_with_or_is_parenthesised_before_clauses_are_added():
    """SetResourceRequirements wraps require_gpus for && (check_expr_and_wrap_for_op)."""
    ad = job("request_gpus = 1\nrequire_gpus = DeviceName == \"A\" || DeviceName == \"B\"\n"
             "gpus_minimum_runtime = 12.1")
    assert expr(ad, "RequireGPUs") == ('(DeviceName == "A" || DeviceName == "B") && '
                                       "MaxSupportedVersion >= GPUsMinRuntime")


@pytest.mark.parametrize("text, value", [("12.1", 12010), ("11.2", 11020), ("12", 12000),
                                         ("12010", 12010), ("9.05", 9050)])
def test_gpus_minimum_runtime_is_major_times_1000_plus_minor_times_10(text, value):
    """SetRequestGpus: x.y is x*1000 + y*10; a bare number above 1000 is already canonical."""
    assert job(f"request_gpus = 1\ngpus_minimum_runtime = {text}")["GPUsMinRuntime"] == value


def test_gpu_constraints_need_a_gpu_request():
    """SetRequestGpus reads require_gpus and the gpus_ constraints only when RequestGPUs is set."""
    ad = job("require_gpus = Capability > 8\ngpus_minimum_memory = 4G")
    assert "RequireGPUs" not in ad and "GPUsMinMemory" not in ad


# --- grid universe: SubmitHash::SetUniverse and SubmitHash::SetGridParams -------------

def test_batch_commands_set_their_attributes_in_the_grid_universe():
    """SetGridParams: batch_queue, batch_project, batch_extra_submit_args are strings,
    batch_runtime an expression; a non-Condor grid job's Requirements is only the user's."""
    ad = job("universe = grid\ngrid_resource = batch slurm\nbatch_queue = short\n"
             "batch_project = physics\nbatch_runtime = 3600\nrequirements = Memory > 3")
    assert ad["GridResource"] == "batch slurm"
    assert (ad["BatchQueue"], ad["BatchProject"], ad["BatchRuntime"]) == ("short", "physics", 3600)
    assert expr(ad, "Requirements") == "(Memory > 3)"


def test_grid_commands_are_ignored_outside_the_grid_universe():
    """SetGridParams returns at once unless the universe is grid."""
    ad = job("batch_queue = short\ngrid_resource = batch slurm")
    assert "BatchQueue" not in ad and "GridResource" not in ad


def test_a_non_condor_grid_job_without_requirements_gets_true():
    """SetRequirements: no defaults for a non-Condor-C grid job; TRUE when none given."""
    assert job("universe = grid\ngrid_resource = arc ce.example.org")["Requirements"] is True


@pytest.mark.parametrize("text, words", [
    ("universe = grid", "need a grid_resource"),
    ("universe = grid\ngrid_resource = globus gk.example.org", "not a grid type"),
    ("universe = grid\ngrid_resource = ec2", "service URL"),
    ("universe = grid\ngrid_resource = gce https://x\ngce_image = i", "gce_machine_type"),
    ("universe = grid\ngrid_resource = azure x\nazure_image = i", "azure_location"),
])
def test_grid_descriptions_htcondor_refuses_are_refused(text, words):
    """SetUniverse / SetGridParams push_error paths: missing or unknown grid type, ec2
    without a URL, a cloud job missing a command it needs."""
    assert words in refused(text)


def test_ec2_job_attributes(tmp_path, monkeypatch):
    """SetGridParams (EC2): key files made absolute in the iwd, the executable names the
    instance (not a file), ec2_tag_/ec2_parameter_ commands become attributes with their
    name lists, and the instance is tagged Name = executable (handleAVPairs)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "id").write_text("key")
    (tmp_path / "secret").write_text("secret")
    ad = job("universe = grid\ngrid_resource = ec2 https://ec2.amazonaws.com/\n"
             "ec2_access_key_id = id\nec2_secret_access_key = secret\nec2_ami_id = ami-1\n"
             "ec2_instance_type = m1.small\nec2_tag_Owner = me\nec2_parameter_Foo = bar",
             executable="my-instance")
    assert ad["EC2AccessKeyId"] == str(tmp_path / "id")
    assert ad["EC2SecretAccessKey"] == str(tmp_path / "secret")
    assert (ad["EC2AmiID"], ad["EC2InstanceType"]) == ("ami-1", "m1.small")
    assert (ad["Cmd"], ad["TransferExecutable"]) == ("my-instance", False)
    assert (ad["EC2TagOwner"], ad["EC2TagNames"], ad["EC2TagName"]) == ("me", "Owner", "my-instance")
    assert (ad["EC2Parameter_Foo"], ad["EC2ParameterNames"]) == ("bar", "Foo")


def test_ec2_job_needs_its_keys_and_an_ami(tmp_path, monkeypatch):
    """SetGridParams: EC2 jobs require the access key, the secret key and ec2_ami_id;
    ec2_ebs_volumes needs ec2_availability_zone."""
    monkeypatch.chdir(tmp_path)
    base = "universe = grid\ngrid_resource = ec2 https://ec2.amazonaws.com/\n"
    assert "ec2_access_key_id" in refused(base + "ec2_ami_id = a")
    assert "cannot read" in refused(base + "ec2_access_key_id = missing\nec2_ami_id = a")
    roles = base + "ec2_access_key_id = FROM INSTANCE\nec2_ami_id = a\n"
    assert job(roles)["EC2SecretAccessKey"] == "FROM INSTANCE"
    assert "ec2_availability_zone" in refused(roles + "ec2_ebs_volumes = vol-1:hda1")


# --- containers: SubmitHash::SetUniverse, SetExecutable; manual, container universe ----

def test_docker_image_in_the_vanilla_universe_is_a_container_job():
    """SetUniverse: an image in a vanilla job makes it a container job; docker_image
    there sets WantDockerImage and the job asks for a machine that can pull it."""
    ad = job("docker_image = alpine:3.19")
    assert (ad["JobUniverse"], ad["WantContainer"], ad["WantDockerImage"]) == (5, True, True)
    assert ad["DockerImage"] == "alpine:3.19"
    assert "TARGET.HasContainer && TARGET.HasDockerURL" in expr(ad, "Requirements")


@pytest.mark.parametrize("text, words", [
    ("universe = docker\ndocker_image = a\ncontainer_image = docker://a", "docker universe"),
    ("docker_image = a\ncontainer_image = docker://a", "not both"),
    ("universe = container", "need a container_image"),
    ("container_image = library://alpine", "not a container image"),
    ("container_image = shub://x/y", "not a container image"),
    ("container_image = instance://running", "not a container image"),
])
def test_container_descriptions_htcondor_refuses_are_refused(text, words):
    """SetUniverse and SetExecutable (check_container_image) push_error paths."""
    assert words in refused(text)


def test_registry_images_are_never_transferred():
    """Manual, container universe: docker:// and oras:// images are fetched by the
    runtime, never transferred; an oras:// artifact is a SIF image."""
    ad = job("container_image = oras://registry.example.org/tools/img:1")
    assert (ad["ContainerImage"], ad["ContainerImageSource"]) == (
        "oras://registry.example.org/tools/img:1", "oras")
    assert ad["WantSIF"] is True
    assert "TransferInput" not in ad and "WantTransferPluginMethods" not in ad


def test_a_container_job_needs_no_executable_and_keeps_an_absolute_one_in_the_image():
    """SetExecutable: no executable is allowed for container jobs; an absolute one with
    no transfer_executable is taken to be inside the image (not transferred)."""
    none = next(iter(Submit("container_image = docker://a\nqueue\n").jobs(owner="alice")))
    assert (none["Cmd"], none["TransferExecutable"]) == ("", False)
    inside = job("container_image = docker://a", executable="/usr/bin/python3")
    assert (inside["Cmd"], inside["TransferExecutable"]) == ("/usr/bin/python3", False)


# --- simple commands: the prunable_keywords table and SubmitHash::do_simple_commands ---

def test_manifest_commands():
    """prunable_keywords: manifest is a boolean (ManifestDesired), manifest_dir a string
    (ManifestDir)."""
    ad = job("manifest = true\nmanifest_dir = /data/manifests")
    assert (ad["ManifestDesired"], ad["ManifestDir"]) == (True, "/data/manifests")


@pytest.mark.parametrize("text, value", [("true", True), ("FALSE", False), ("1", True),
                                         ("0", False), ("2 > 1", True)])
def test_boolean_commands_read_as_string_is_boolean_param(text, value):
    """do_simple_commands (f_as_bool): true/false/1/0 or an expression with a boolean value."""
    ad = job(f"manifest = {text}\npreserve_relative_paths = {text}")
    assert ad["ManifestDesired"] is value and ad["PreserveRelativePaths"] is value


@pytest.mark.parametrize("line, command", [("manifest = yes", "manifest"),
                                           ("skip_if_dataflow = maybe", "skip_if_dataflow"),
                                           ("checkpoint_exit_code = abc", "checkpoint_exit_code"),
                                           ("match_list_length = x", "match_list_length")])
def test_boolean_and_integer_commands_refuse_other_values(line, command):
    """do_simple_commands: "must eval to a boolean" / "must eval to an integer" errors."""
    assert command in refused(line)


def test_integer_commands_are_truncated_integers():
    """do_simple_commands (f_as_int) reads string_is_long_param: 85.7 is 85."""
    assert job("checkpoint_exit_code = 85.7")["SuccessCheckpointExitCode"] == 85


def test_a_checkpoint_exit_code_asks_for_transfer_on_checkpoint():
    """SetAutoAttributes: a job with a checkpoint exit code gets WantFTOnCheckpoint."""
    assert job("checkpoint_exit_code = 85")["WantFTOnCheckpoint"] is True


# --- macros: next_config_macro in src/condor_utils/config.cpp --------------------------

def test_an_unterminated_macro_is_kept_and_later_macros_still_expand():
    """next_config_macro: a ``$(`` never closed is not a macro; the search goes on after
    it, so a later ``$(X)`` is still expanded."""
    ad = job("X = 1\narguments = a $(X b $(X) $(foo:def c")
    assert ad["Args"] == "a $(X b 1 $(foo:def c"


def test_a_body_that_is_not_a_name_is_kept_as_written():
    """next_config_macro: before a ``:`` the body must be name characters; ``$(two words)``
    is left as written (a default after ``:`` may hold blanks)."""
    ad = job("X = 2\narguments = $(two words) $(X) $(none:with blanks)")
    assert ad["Args"] == "$(two words) 2 with blanks"


def test_an_unterminated_match_time_macro_does_not_hide_later_macros():
    """next_config_macro treats ``$$(`` like ``$(``: unclosed, the search goes on after it."""
    assert job("X = 2\narguments = $$(x $(X)")["Args"] == "$$(x 2"


# --- descriptions HTCondor refuses: the push_error paths of the Set* functions ---------

@pytest.mark.parametrize("text, command", [
    ("universe = vm\nvm_type = kvm\nvm_memory = 128\ninput = in.txt", "input"),
    ("rank = Memory\npreferences = Cpus", "preferences"),
    ("kill_sig = NOSUCHSIGNAL", "kill_sig"),
    ("hold_kill_sig = 999", "hold_kill_sig"),
    ("container_image = docker://a\ncontainer_service_names = web", "container_service_names"),
    ("container_image = docker://a\ncontainer_service_names = web\nweb_container_port = 70000",
     "web_container_port"),
    ("image_size = lots", "image_size"),
    ("image_size = 0", "image_size"),
    ("success_exit_code = abc", "success_exit_code"),
    ("input = in.txt\ntransfer_input = maybe", "transfer_input"),
    ("output = out.txt\nstream_output = perhaps", "stream_output"),
    ("nice_user = maybe", "nice_user"),
    ("hold = maybe", "hold"),
    ("job_machine_attrs_history_length = -1", "job_machine_attrs_history_length"),
])
def test_descriptions_htcondor_refuses_are_refused_naming_the_command(text, command):
    """CheckStdFile (vm streams), SetRank (both), fixupKillSigName (invalid signal),
    SetContainerSpecial (service port), SetImageSize (invalid, not positive),
    SetJobRetries (success_exit_code), submit_param_bool (booleans),
    ReportCommonMistakes (history length bounds)."""
    assert command in refused(text)


def test_preferences_is_another_name_for_rank():
    """SetRank: preferences is used when rank is not given."""
    assert expr(job("preferences = Memory"), "Rank") == "Memory"


def test_booleans_and_sizes_htcondor_accepts():
    """submit_param_bool takes 1/0; SetImageSize takes units; signals by name or number."""
    ad = job("hold = 1\nimage_size = 2M\nkill_sig = term\nremove_kill_sig = 9\n"
             "container_image = docker://a\ncontainer_service_names = web\nweb_container_port = 8080")
    assert (ad["JobStatus"], ad["ImageSize"], ad["KillSig"], ad["RemoveKillSig"]) == (5, 2048, "SIGTERM", "SIGKILL")
    assert ad["web_ContainerPort"] == 8080


def test_queue_count_with_a_slice_repeats_each_selected_item():
    """condor_submit's queue loop: the slice picks items (ItemIndex keeps the item's place
    in the whole list), the count repeats each one (Step 0..count-1)."""
    ads = list(Submit("executable = /bin/true\narguments = $(x) $(ItemIndex) $(Step)\n"
                      "queue 2 x in [1:3] (a, b, c, d)\n").jobs(owner="alice"))
    assert [ad["Args"] for ad in ads] == ["b 1 0", "b 1 1", "c 2 0", "c 2 1"]


def test_simple_table_commands_roost_did_not_know():
    """prunable_keywords: batch_id, jobset, submit_event_user_notes, max_transfer_*_mb,
    want_io_proxy, the file_remaps/buffer_* and fetch/compress/append/local_files
    commands, dagman_job_id (non-negative), dag_node_name, parallel_script_* and
    core_size (an integer of any size)."""
    ad = job('batch_id = "b7"\njobset = nightly\nsubmit_event_user_notes = hello\n'
             "max_transfer_input_mb = 100\nwant_io_proxy = true\nappend_files = a.log\n"
             "dagman_job_id = 12\ndag_node_name = A\ncore_size = 10000000000\n"
             "buffer_size = 524288\nparallel_script_shadow = s.sh")
    assert (ad["JobBatchId"], ad["JobSetName"], ad["SubmitEventUserNotes"]) == ("b7", "nightly", "hello")
    assert (ad["MaxTransferInputMB"], ad["WantIOProxy"], ad["AppendFiles"]) == (100, True, "a.log")
    assert (ad["DAGManJobId"], ad["DAGNodeName"], ad["CoreSize"]) == (12, "A", 10000000000)
    assert (ad["BufferSize"], ad["ParallelScriptShadow"]) == (524288, "s.sh")
    assert "dagman_job_id" in refused("dagman_job_id = -1")


@pytest.mark.parametrize("number, universe", [("5", 5), ("12", 12), ("7", 7)])
def test_a_universe_may_be_given_by_number(number, universe):
    """SetUniverse reads the universe with CondorUniverseNumberEx: a number is taken as is."""
    assert job(f"universe = {number}")["JobUniverse"] == universe


def test_retired_universes_by_number_are_refused():
    """SetUniverse: a known but unsupported universe (1 is standard) is an error."""
    assert "no longer supported" in refused("universe = 1")
