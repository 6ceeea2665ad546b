"""The grid universe's submit commands, as HTCondor's SubmitHash::SetGridParams reads
them: grid_resource and the grid type it names, the batch_ and arc_ commands for the
batch and ARC grid types, and the ec2_, gce_ and azure_ commands for cloud instances.
Grid commands in any other universe are ignored, as in HTCondor."""

from __future__ import annotations

import os
import re
import warnings

from schedd.submit.cluster import RuleReader
from schedd.submit.errors import SubmitError, SubmitWarning
from schedd.submit.values import is_true, string_value, to_value

#: grid types HTCondor accepts as the first word of grid_resource (any case)
GRID_TYPES = ("batch", "blah", "pbs", "sge", "lsf", "nqs", "naregi", "condor", "arc", "ec2",
              "gce", "azure")
#: grid types whose executable names the instance rather than a file
CLOUD_TYPES = ("ec2", "gce", "azure")
#: the value of an EC2 key command meaning "use the instance's own role"
INSTANCE_ROLE = "FROM INSTANCE"

#: commands copied as strings, each with its attribute
STRING_COMMANDS = (
    ("arc_rte", "ArcRte"), ("arc_resources", "ArcResources"), ("arc_application", "ArcApplication"),
    ("batch_extra_submit_args", "BatchExtraSubmitArgs"), ("batch_project", "BatchProject"),
    ("batch_queue", "BatchQueue"),
    ("ec2_security_groups", "EC2SecurityGroups"), ("ec2_security_ids", "EC2SecurityIDs"),
    ("ec2_ami_id", "EC2AmiID"), ("ec2_instance_type", "EC2InstanceType"),
    ("ec2_vpc_subnet", "EC2VpcSubnet"), ("ec2_vpc_ip", "EC2VpcIP"),
    ("ec2_elastic_ip", "EC2ElasticIP"), ("ec2_availability_zone", "EC2AvailabilityZone"),
    ("ec2_spot_price", "EC2SpotPrice"), ("ec2_block_device_mapping", "EC2BlockDeviceMapping"),
    ("ec2_user_data", "EC2UserData"), ("ec2_iam_profile_arn", "EC2IamProfileArn"),
    ("gce_account", "GceAccount"), ("gce_image", "GceImage"), ("gce_machine_type", "GceMachineType"),
    ("azure_image", "AzureImage"), ("azure_location", "AzureLocation"), ("azure_size", "AzureSize"),
    ("azure_admin_username", "AzureAdminUsername"), ("azure_admin_key", "AzureAdminKey"))
#: commands naming a file on the submitting machine, made absolute in the job's iwd
FILE_COMMANDS = (("ec2_user_data_file", "EC2UserDataFile"), ("gce_auth_file", "GceAuthFile"),
                 ("gce_metadata_file", "GceMetadataFile"), ("gce_json_file", "GceJsonFile"),
                 ("azure_auth_file", "AzureAuthFile"))
#: per grid type, the attributes a job of that type cannot do without, and the command
#: that sets each
REQUIRED = {
    "ec2": (("EC2AccessKeyId", "ec2_access_key_id' or 'aws_access_key_id_file"),
            ("EC2SecretAccessKey", "ec2_secret_access_key' or 'aws_secret_access_key_file"),
            ("EC2AmiID", "ec2_ami_id")),
    "gce": (("GceImage", "gce_image"), ("GceMachineType", "gce_machine_type")),
    "azure": (("AzureImage", "azure_image"), ("AzureLocation", "azure_location"),
              ("AzureSize", "azure_size"), ("AzureAdminUsername", "azure_admin_username"),
              ("AzureAdminKey", "azure_admin_key")),
}
#: every grid command this module reads (besides the ec2_tag_, ec2_parameter_ and
#: cloud_label_ families)
GRID_COMMANDS = ("grid_resource", "batch_runtime", "ec2_access_key_id", "ec2_secret_access_key",
                 "ec2_keypair", "ec2_keypair_file", "ec2_ebs_volumes", "ec2_iam_profile_name",
                 "ec2_tag_names", "ec2_parameter_names", "cloud_label_names", "gce_metadata",
                 "gce_preemptible", *(c for c, _ in STRING_COMMANDS + FILE_COMMANDS))
#: "name:device" pairs of ec2_ebs_volumes
_EBS_VOLUME = re.compile(r"^[^:,]+:[^:,]+$")


def fail(message: str, command: str) -> SubmitError:
    return SubmitError(message, command=command)


def grid_type(r: RuleReader) -> str:
    """The lower-cased grid type (grid_resource's first word); '' when there is none."""
    text = string_value(r.get("grid_resource") or "")
    return text.split(" ", 1)[0].lower() if text else ""


def check_grid_resource(r: RuleReader) -> str:
    """grid_resource, checked as SubmitHash::SetUniverse and SetGridParams check it."""
    text = string_value(r.get("grid_resource") or "")
    if not text:
        raise fail("grid universe jobs need a grid_resource (for example "
                   "'grid_resource = batch slurm')", "grid_resource")
    kind = grid_type(r)
    if kind not in GRID_TYPES:
        raise fail(f"{text.split(' ', 1)[0]!r} is not a grid type; use one of condor, batch, arc, "
                   "ec2, gce or azure", "grid_resource")
    if text.lower() == "ec2":
        raise fail("ec2 grid jobs need the service URL after ec2 (grid_resource = ec2 "
                   "https://ec2.amazonaws.com/)", "grid_resource")
    return text


def grid(r: RuleReader, universe: str) -> None:
    """The grid attributes of a grid universe job; nothing for any other universe."""
    if universe != "grid":
        return
    r["GridResource"] = check_grid_resource(r)
    kind = grid_type(r)
    for command, attr in STRING_COMMANDS:
        text = r.get(command)
        if text and text.strip():
            r[attr] = text.strip()
    runtime = r.get("batch_runtime")
    if runtime and runtime.strip():
        r["BatchRuntime"] = to_value(runtime, "batch_runtime")
    ec2_keys(r)
    ec2_options(r)
    for command, attr in FILE_COMMANDS:
        path = _file(r, command)
        if path is not None:
            r[attr] = path
    gce_options(r)
    cloud_labels(r, kind)
    for attr, command in REQUIRED.get(kind, ()):
        if r.attr(attr) is None:
            raise fail(f"{kind} jobs need '{command}'", command.split("'")[0])


def ec2_keys(r: RuleReader) -> None:
    """EC2AccessKeyId and EC2SecretAccessKey: files (made absolute), or FROM INSTANCE
    for both."""
    for commands, attr in ((("ec2_access_key_id", "aws_access_key_id_file"), "EC2AccessKeyId"),
                           (("ec2_secret_access_key", "aws_secret_access_key_file"),
                            "EC2SecretAccessKey")):
        command = next((c for c in commands if (r.get(c) or "").strip()), None)
        if command is None:
            continue
        if string_value(r.get(command) or "").upper() == INSTANCE_ROLE:
            r["EC2AccessKeyId"] = INSTANCE_ROLE
            r["EC2SecretAccessKey"] = INSTANCE_ROLE
        else:
            r[attr] = _file(r, command)


def ec2_options(r: RuleReader) -> None:
    """The optional ec2_ commands that need more than a copy."""
    keypair = _first(r, "ec2_keypair", "ec2_keyp_air")
    keypair_file = _first(r, "ec2_keypair_file", "ec2_key_pair_file")
    if keypair:
        r["EC2KeyPair"] = keypair
        if keypair_file:
            warnings.warn("ec2_keypair and ec2_keypair_file are both given; ec2_keypair_file is "
                          "ignored", SubmitWarning, stacklevel=2)
    elif keypair_file:
        r["EC2KeyPairFile"] = _in_iwd(r, keypair_file)
    volumes = r.get("ec2_ebs_volumes")
    if volumes and volumes.strip():
        if not all(_EBS_VOLUME.match(v.strip()) for v in volumes.strip().split(",")):
            raise fail("must be volume:device pairs separated by commas (ec2_ebs_volumes = "
                       "vol-35bcc15e:hda1,vol-35bcc16f:hda2)", "ec2_ebs_volumes")
        if r.attr("EC2AvailabilityZone") is None:
            raise fail("ec2_ebs_volumes needs ec2_availability_zone", "ec2_ebs_volumes")
        r["EC2EBSVolumes"] = volumes.strip()
    profile = r.get("ec2_iam_profile_name")
    if profile and profile.strip():
        if r.attr("EC2IamProfileArn") is not None:
            warnings.warn("ec2_iam_profile_arn and ec2_iam_profile_name are both given; "
                          "ec2_iam_profile_name is ignored", SubmitWarning, stacklevel=2)
        else:
            r["EC2IamProfileName"] = profile.strip()
    named_pairs(r, "ec2_parameter_", "EC2Parameter_", "ec2_parameter_names", "EC2ParameterNames",
                separator=", ")


def gce_options(r: RuleReader) -> None:
    metadata = r.get("gce_metadata")
    if metadata and metadata.strip():
        r["GceMetadata"] = ",".join(p.strip() for p in metadata.split(",") if p.strip())
    preemptible = r.get("gce_preemptible")
    if preemptible and preemptible.strip():
        word = string_value(preemptible).lower()
        if word not in ("true", "false", "yes", "no", "t", "f", "1", "0"):
            raise fail(f"{preemptible.strip()!r} is not true or false", "gce_preemptible")
        r["GcePreemptible"] = is_true(preemptible)


def cloud_labels(r: RuleReader, kind: str) -> None:
    """ec2_tag_<name> and cloud_label_<name>, with the name lists HTCondor keeps beside
    them (EC2 tags are case-sensitive, attribute names are not); an EC2 instance is
    tagged Name = the executable unless WantNameTag is false."""
    names = named_pairs(r, "ec2_tag_", "EC2Tag", "ec2_tag_names", "EC2TagNames")
    if kind == "ec2" and "name" not in {n.lower() for n in names} and is_true(
            r.get("WantNameTag"), default=True) and r.attr("Cmd"):
        r["EC2TagName"] = r.attr("Cmd")
    named_pairs(r, "cloud_label_", "CloudLabel", "cloud_label_names", "CloudLabelNames")


def named_pairs(r: RuleReader, prefix: str, attr_prefix: str, names_command: str,
                names_attr: str, separator: str = ",") -> list[str]:
    """``<prefix><name> = value`` commands as ``<attr_prefix><name>`` attributes, and the
    list of names in ``names_attr`` (a name listed in ``names_command`` keeps its case)."""
    listed = [n.strip() for n in re.split(r"[,\s]+", r.get(names_command) or "") if n.strip()]
    names = list(listed)
    for key in r.keys():
        if not key.startswith(prefix) or key == names_command or len(key) == len(prefix):
            continue
        name = r.line_of(key).name[len(prefix):]
        if name.lower() != "names" and name.lower() not in {n.lower().replace(".", "_") for n in names}:
            names.append(name)
        r[attr_prefix + name] = (r.get(key) or "").strip()
    if names:
        r[names_attr] = separator.join(names)
    return names


def _first(r: RuleReader, *commands: str) -> str | None:
    for command in commands:
        text = r.get(command)
        if text and text.strip():
            return text.strip()
    return None


def _in_iwd(r: RuleReader, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(r.attr("Iwd"), path)


def _file(r: RuleReader, command: str) -> str | None:
    """A file command's path made absolute; on the submitting side the file must be
    readable and not a directory (skipped where files are not looked at)."""
    text = r.get(command)
    if not text or not text.strip():
        return None
    path = _in_iwd(r, string_value(text))
    if not r.context.self_contained and not is_true(r.get("skip_filechecks")):
        if os.path.isdir(path):
            raise fail(f"{path} is a directory, not a file", command)
        if not os.access(path, os.R_OK):
            raise fail(f"cannot read {path}", command)
    return path
