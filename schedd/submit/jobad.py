"""The rules that turn submit commands into job attributes, in the order HTCondor's
submit code applies them. Each rule is a function of a :class:`RuleReader`."""

from __future__ import annotations

import os
import re
import signal

from jobmodel.concurrency_limits import LimitSyntaxError, parse_limits
from schedd.submit.arguments import job_arguments
from schedd.submit.cluster import RuleReader
from schedd.submit.containers import check_images, container_attributes, is_container_job, transferred_image
from schedd.submit.environment import job_environment
from schedd.submit.errors import SubmitError
from schedd.submit.gangs import gang_size, machine_count
from schedd.submit.gpus import SHARE_COMMANDS, gpus
from schedd.submit.grid import CLOUD_TYPES, grid_type
from schedd.submit.grid import grid as grid_commands
from schedd.submit.requirements import requirements_value
from schedd.submit.transfer_modes import transfer_modes
from schedd.submit.values import UNDEFINED, Expr, boolean_param, is_true, long_param, size_value, string_value, to_value

KIB, MIB = 1 << 10, 1 << 20

#: attributes every job starts with
BASE_ATTRIBUTES: dict[str, object] = {
    "MyType": "Job", "TargetType": "Machine", "Owner": UNDEFINED, "JobStatus": 1,
    "JobPrio": 0, "JobNotification": 0, "JobSubmitMethod": 2,
    "CommittedSlotTime": 0, "CommittedSuspensionTime": 0, "CommittedTime": 0,
    "CumulativeRemoteSysCpu": 0.0, "CumulativeRemoteUserCpu": 0.0, "CumulativeSlotTime": 0,
    "CumulativeSuspensionTime": 0, "CurrentHosts": 0, "ExitBySignal": False, "ExitStatus": 0,
    "LastSuspensionTime": 0, "LeaveJobInQueue": False, "MaxHosts": 1, "MinHosts": 1,
    "NumCkpts": 0, "NumJobCompletions": 0, "NumJobStarts": 0, "NumRestarts": 0,
    "NumSystemHolds": 0, "Rank": 0.0, "RemoteSysCpu": 0.0, "RemoteUserCpu": 0.0,
    "RemoteWallClockTime": 0.0, "TotalSuspensions": 0, "TransferInputSizeMB": 0,
    "RequestCpus": 1, "RequestDisk": Expr("DiskUsage"),
    "RequestMemory": Expr("ifthenelse(MemoryUsage isnt undefined,MemoryUsage,"
                          "(ImageSize + 1023) / 1024)"),
}

UNIVERSES = {"vanilla": 5, "scheduler": 7, "grid": 9, "java": 10, "parallel": 11,
             "local": 12, "vm": 13, "docker": 5, "container": 5}
_RETIRED = {"standard": 1, "pvm": 4, "mpi": 8, "globus": 9}
#: universes by number, as CondorUniverseNumberEx also reads them (universe = 5)
_UNIVERSE_NUMBERS = {"1": "standard", "4": "pvm", "5": "vanilla", "7": "scheduler", "8": "mpi",
                     "9": "grid", "10": "java", "11": "parallel", "12": "local", "13": "vm"}
_KILLSIG_BY_DEFAULT = {"local", "scheduler", "parallel", "java", "grid", "vm"}
_NO_LEASE = {"local", "scheduler", "grid"}
SIGNALS = {1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 6: "SIGABRT", 9: "SIGKILL",
           10: "SIGUSR1", 12: "SIGUSR2", 14: "SIGALRM", 15: "SIGTERM", 17: "SIGCHLD",
           18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP"}


#: signal names kill_sig, remove_kill_sig and hold_kill_sig accept (fixupKillSigName)
SIGNAL_NAMES = frozenset(s.name for s in signal.Signals)


def fail(message: str, command: str) -> SubmitError:
    return SubmitError(message, command=command)


def universe_of(r: RuleReader) -> str:
    """The job's universe name; a vanilla job (or one naming no universe) that gives a
    container_image or docker_image is a ``container`` job, as in SubmitHash::SetUniverse."""
    text = r.get("universe")
    name = text.strip().lower() if text and text.strip() else "vanilla"
    name = _UNIVERSE_NUMBERS.get(name, name)
    if name in _RETIRED:
        raise fail(f"the {name} universe is no longer supported; use vanilla", "universe")
    if name not in UNIVERSES:
        raise fail(f"{text.strip()!r} is not a universe; expected one of "
                   + ", ".join(sorted(UNIVERSES)), "universe")
    return "container" if is_container_job(r, name) else name


def base(r: RuleReader) -> None:
    for name, value in BASE_ATTRIBUTES.items():
        r[name] = value


def universe(r: RuleReader) -> None:
    name = universe_of(r)
    check_images(r, name)
    r["JobUniverse"] = UNIVERSES[name]
    if name not in _NO_LEASE:
        r["JobLeaseDuration"] = 2400
    if name in _KILLSIG_BY_DEFAULT:
        r["KillSig"] = "SIGTERM"
    if name == "docker":
        r["WantDocker"] = True
        image = r.get("docker_image")
        if not image:
            raise fail("docker universe jobs need a docker_image", "docker_image")
    if name == "container":
        r["WantContainer"] = True
    if name == "parallel":
        count = r.get("machine_count")
        if count:
            hosts = to_value(count, "machine_count")
            r["MinHosts"] = hosts
            r["MaxHosts"] = hosts
        r["JobRequiresSandbox"] = True
        r["WantIOProxy"] = True
    if name == "java" and not (r.get("arguments") or "").strip():
        raise fail("java universe jobs need arguments naming the main class", "arguments")
    if name == "vm":
        vm(r)


def vm(r: RuleReader) -> None:
    kind = r.get("vm_type")
    if not kind:
        raise fail("vm universe jobs need a vm_type", "vm_type")
    memory = r.get("vm_memory")
    if not memory:
        raise fail("vm universe jobs need vm_memory", "vm_memory")
    mem = to_value(memory, "vm_memory")
    r["JobVMType"] = kind.strip().lower()
    r["JobVMMemory"] = mem
    r["JobVM_VCPUS"] = to_value(r.get("vm_vcpus") or "1", "vm_vcpus")
    r["JobVMCheckpoint"] = is_true(r.get("vm_checkpoint"))
    r["JobVMNetworking"] = is_true(r.get("vm_networking"))
    r["JobVMVNCConsole"] = is_true(r.get("vm_vnc"))
    r["RequestMemory"] = Expr("MY.JobVMMemory")
    r["ShouldTransferFiles"] = "YES"
    if isinstance(mem, int):
        r["TransferInputSizeMB"] = mem
    disk = r.get("vm_disk")
    if disk:
        r["VMPARAM_vm_Disk"] = disk.strip()


def executable(r: RuleReader) -> None:
    name = universe_of(r)
    text = r.get("executable")
    transfer = is_true(r.get("transfer_executable"), default=True)
    if name == "java":
        r["Cmd"] = "java"
        r["TransferExecutable"] = False
        return
    if name == "vm" or name == "grid" and grid_type(r) in CLOUD_TYPES:
        r["Cmd"] = (text or "").strip()
        r["TransferExecutable"] = False
        return
    contained = name in ("docker", "container")
    if not text or not text.strip():
        if contained:
            r["Cmd"] = ""
            r["TransferExecutable"] = False
            return
        raise fail("no executable is given; add 'executable = <program>'", "executable")
    path = text.strip()
    if contained and os.path.isabs(path) and r.get("transfer_executable") is None:
        transfer = False
    if not transfer:
        r["Cmd"] = path
        r["TransferExecutable"] = False
        return
    full = path if os.path.isabs(path) else os.path.join(r.context.cwd, path)
    r["Cmd"] = full
    size = probed_kib(r, full)
    r["ExecutableSize"] = size
    r["ImageSize"] = size


def file_kib(path: str) -> int:
    """A file's size in KiB rounded up; 0 for a missing file or a directory."""
    try:
        if os.path.isdir(path):
            return 0
        return (os.path.getsize(path) + 1023) // 1024
    except OSError:
        return 0


def probed_kib(r: RuleReader, path: str) -> int:
    """:func:`file_kib` on the submitting machine; in the schedd, which does not look
    at its own files for a client, the size the client measured (else 0)."""
    if r.context.self_contained:
        return r.context.file_sizes.get(path, 0)
    return file_kib(path)


def iwd(r: RuleReader) -> None:
    text = r.get("initialdir") or r.get("initial_dir")
    if not text or not text.strip():
        r["Iwd"] = r.context.cwd
        return
    path = text.strip()
    full = path if os.path.isabs(path) else os.path.join(r.context.cwd, path)
    if not r.context.self_contained and not os.path.isdir(full):
        raise fail(f"the initial directory {path!r} does not exist", "initialdir")
    r["Iwd"] = full


def grid(r: RuleReader) -> None:
    grid_commands(r, universe_of(r))


def in_iwd(r: RuleReader, path: str) -> str:
    return path if os.path.isabs(path) else os.path.join(r.attr("Iwd"), path)


def arguments(r: RuleReader) -> None:
    allow = is_true(r.get("allow_arguments_v1"))
    try:
        attr, value = job_arguments(r.get("arguments"), r.get("arguments2"), allow)
    except SubmitError as exc:
        raise exc.located(command="arguments") from None
    r[attr] = value


def environment(r: RuleReader) -> None:
    allow = is_true(r.get("allow_environment_v1"))
    result = job_environment(r.get("environment"), r.get("environment2"), r.get("env"),
                             r.get("getenv"), allow, r.context.environ)
    for name, value in result.items():
        r[name] = value


_STREAMS = (("input", "In", "TransferIn", "StreamIn", "stream_input", "transfer_input"),
            ("output", "Out", "TransferOut", "StreamOut", "stream_output", "transfer_output"),
            ("error", "Err", "TransferErr", "StreamErr", "stream_error", "transfer_error"))


def io(r: RuleReader) -> None:
    """In, Out and Err with their transfer and stream flags (SubmitHash::SetStdin/
    SetStdout/SetStderr); the flags are HTCondor booleans, and a vm universe job takes
    no standard streams (CheckStdFile)."""
    vm = universe_of(r) == "vm"
    for command, attr, transfer_attr, stream_attr, stream_cmd, transfer_cmd in _STREAMS:
        text = (r.get(command) or "").strip()
        if vm and text and text != "/dev/null":
            raise fail("a vm universe job takes no input, output or error file", command)
        r[attr] = text or "/dev/null"
        transfer = _given_boolean(r, transfer_cmd) if r.get(transfer_cmd) else True
        stream = _given_boolean(r, stream_cmd)
        if text and text != "/dev/null" and transfer:
            r[stream_attr] = stream
        else:
            r[transfer_attr] = False
    log = (r.get("log") or "").strip()
    if log:
        r["UserLog"] = in_iwd(r, log)
        if r.get("log_xml") is not None:
            r["UserLogUseXML"] = is_true(r.get("log_xml"))
    for command, attr in (("dagman_log", "DAGManNodesLog"), ("starter_log", "JobStarterLog")):
        text = (r.get(command) or "").strip()
        if text:
            r[attr] = in_iwd(r, text)


def _either(r: RuleReader, command: str, alternate: str) -> str | None:
    """A command HTCondor also reads under a second name (its attribute's)."""
    text = r.get(command)
    return text if text is not None else r.get(alternate)


def file_list(text: str | None) -> list[str]:
    """A comma (or blank) separated list of files."""
    if not text:
        return []
    return [f for f in re.split(r"[,\s]+", string_value(text)) if f]


def container(r: RuleReader) -> None:
    if universe_of(r) == "container":
        container_attributes(r)


def transfer(r: RuleReader) -> None:
    should_text = _either(r, "should_transfer_files", "ShouldTransferFiles")
    when_text = _either(r, "when_to_transfer_output", "WhenToTransferOutput")
    if universe_of(r) == "vm":
        should_text = "YES"
        when_text = "ON_EXIT_OR_EVICT" if is_true(r.get("vm_checkpoint")) else "ON_EXIT"
    lists = any((r.get(c) or "").strip() for c in ("transfer_input_files", "transfer_output_files"))
    modes = transfer_modes(should_text, when_text, has_transfer_lists=lists)
    r["ShouldTransferFiles"] = modes.should
    if modes.when is not None:
        r["WhenToTransferOutput"] = modes.when
    inputs = file_list(r.get("transfer_input_files"))
    image = transferred_image(r)
    if image:
        inputs = [image] + inputs
    if inputs:
        r["TransferInput"] = ",".join(inputs)
    outputs = r.get("transfer_output_files")
    if outputs is not None:
        r["TransferOutput"] = ",".join(file_list(outputs))
    for command, attr in (("transfer_output_remaps", "TransferOutputRemaps"),
                          ("transfer_checkpoint_files", "TransferCheckpoint")):
        text = r.get(command)
        if text is not None and text.strip():
            r[attr] = string_value(text)
    if r.get("transfer_checkpoint_files"):
        r["WantFTOnCheckpoint"] = True
    for command, attr in (("public_input_files", "PublicInputFiles"),
                          ("email_attributes", "EmailAttributes"),
                          ("use_oauth_services", "OAuthServicesNeeded")):
        items = file_list(r.get(command))
        if items:
            r[attr] = ",".join(items)
    disk_usage(r, inputs)
    url_transfer(r, inputs)


def disk_usage(r: RuleReader, inputs: list[str]) -> None:
    if universe_of(r) == "vm":
        memory = r.attr("JobVMMemory")
        if isinstance(memory, int):
            kib = memory * 1024
            r["DiskUsage"] = kib
            r["ExecutableSize"] = kib
            r["ImageSize"] = kib
        return
    cmd = r.attr("Cmd")
    total = r.attr("ExecutableSize") or 0
    stdin = r.attr("In")
    if stdin and stdin != "/dev/null":
        total += probed_kib(r, in_iwd(r, stdin))
    for name in inputs:
        if "://" not in name and name != cmd:
            total += probed_kib(r, in_iwd(r, name))
    r["DiskUsage"] = total
    r["ExecutableSize"] = r.attr("ExecutableSize") or 0
    image = r.get("image_size")
    r["ImageSize"] = image_size(image) if image and image.strip() else r.attr("ExecutableSize") or 0


def image_size(text: str) -> int:
    """image_size as SubmitHash::SetImageSize reads it: KiB, or a number with K, M, G or
    T; it must be positive."""
    value = size_value(text, KIB, "image_size")
    if type(value) is not int:
        raise fail(f"{text.strip()!r} is not a size (KiB, or a number with K, M, G or T)", "image_size")
    if value < 1:
        raise fail("must be positive", "image_size")
    return value


def url_schemes(urls: list[str]) -> list[str]:
    return sorted({u.split("://", 1)[0].lower() for u in urls if "://" in u})


def plugin_schemes(text: str | None) -> set[str]:
    """Schemes a job brings its own plugins for (``transfer_plugins = a,b=/path; ...``)."""
    schemes: set[str] = set()
    for entry in (text or "").split(";"):
        names, _, _ = entry.partition("=")
        schemes |= {n.strip().lower() for n in names.split(",") if n.strip()}
    return schemes


def url_transfer(r: RuleReader, inputs: list[str]) -> None:
    urls = [u for u in inputs if "://" in u]
    for command in ("output_destination", "checkpoint_destination"):
        text = r.get(command)
        if text:
            r["OutputDestination" if command == "output_destination"
              else "CheckpointDestination"] = string_value(text)
    destination = r.get("output_destination")
    if destination and "://" in destination:
        urls.append(string_value(destination))
    plugins = r.get("transfer_plugins")
    if plugins:
        r["TransferPlugins"] = plugins.strip()
    own = plugin_schemes(plugins)
    wanted = [s for s in url_schemes(urls) if s not in own]
    if wanted:
        r["WantTransferPluginMethods"] = ",".join(wanted)
    if any(s in ("s3", "gs") for s in url_schemes(urls)):
        key_id = r.get("aws_access_key_id_file") or r.get("s3_access_key_id_file") \
            or r.get("gs_access_key_id_file")
        secret = r.get("aws_secret_access_key_file") or r.get("s3_secret_access_key_file") \
            or r.get("gs_secret_access_key_file")
        if not key_id or not secret:
            raise fail("s3:// and gs:// URLs need aws_access_key_id_file and "
                       "aws_secret_access_key_file (or the s3_/gs_ forms)",
                       "transfer_input_files")
        r["EC2AccessKeyId"] = key_id.strip()
        r["EC2SecretAccessKey"] = secret.strip()
    region = r.get("aws_region")
    if region:
        r["AWSRegion"] = string_value(region)


_FIXED_REQUESTS = {"request_cpus", "request_memory", "request_disk", "request_gpus", *SHARE_COMMANDS}


def custom_requests(r: RuleReader) -> list[str]:
    """Keys of ``request_<name>`` commands for resources beyond cpus/memory/disk/gpus."""
    return sorted(k for k in r.keys() if k.startswith("request_") and k not in _FIXED_REQUESTS
                  and k != "request_")


def requests(r: RuleReader) -> None:
    cpus = r.get("request_cpus")
    if cpus and cpus.strip():
        r["RequestCpus"] = to_value(cpus, "request_cpus")
    memory = r.get("request_memory")
    if memory and memory.strip():
        r["RequestMemory"] = size_value(memory, MIB, "request_memory")
    disk = r.get("request_disk")
    if disk and disk.strip():
        r["RequestDisk"] = size_value(disk, KIB, "request_disk")
    for key in custom_requests(r):
        text = r.get(key)
        name = r.line_of(key).name[len("request_"):]
        if text and text.strip():
            r["Request" + name] = to_value(text, key)
    gpus(r)


def _long_param(text: str, command: str) -> int:
    """An integer command as HTCondor's ``submit_param_int`` reads it (``1.5`` is 1)."""
    try:
        value = long_param(text)
    except ValueError:
        raise fail(f"{text.strip()!r} must evaluate to an integer", command) from None
    if not -(1 << 31) <= value < (1 << 31) - 1:
        raise fail(f"{text.strip()!r} is out of bounds for an integer", command)
    return value


def _integer(text: str, command: str, negative: bool = True) -> int:
    """An integer command of HTCondor's simple table (string_is_long_param, no range)."""
    try:
        value = long_param(text)
    except ValueError:
        raise fail(f"{text.strip()!r} must evaluate to an integer", command) from None
    if value < 0 and not negative:
        raise fail(f"{text.strip()!r} must be a non-negative integer", command)
    return value


def _given_boolean(r: RuleReader, command: str) -> bool:
    """A yes/no command that is false when not given (submit_param_bool)."""
    text = r.get(command)
    return bool(text and text.strip()) and _boolean_param(text, command)


def _boolean_param(text: str, command: str) -> bool:
    """A yes/no command as HTCondor's ``submit_param_bool`` reads it (:func:`boolean_param`)."""
    try:
        return boolean_param(text)
    except ValueError:
        raise fail(f"{text.strip()!r} must be true or false (or an expression that evaluates "
                   "to one)", command) from None


def policy(r: RuleReader) -> None:
    if _given_boolean(r, "hold"):
        r["JobStatus"] = 5
        r["HoldReasonCode"] = 15
        r["HoldReason"] = "submitted on hold at user's request"
    priority = _either(r, "priority", "prio")
    if priority and priority.strip():
        r["JobPrio"] = _long_param(priority, "priority")
    notification = r.get("notification")
    if notification and notification.strip():
        codes = {"never": 0, "always": 1, "complete": 2, "error": 3}
        word = notification.strip().lower()
        if word not in codes:
            raise fail(f"{notification.strip()!r} is not one of Never, Always, Complete "
                       "or Error", "notification")
        r["JobNotification"] = codes[word]
    accounting(r)
    concurrency_limits(r)
    retries(r)


def concurrency_limits(r: RuleReader) -> None:
    """``concurrency_limits`` (checked, lower-cased and sorted, as HTCondor writes it) or
    ``concurrency_limits_expr`` (an expression the negotiator evaluates against each slot),
    both into ``ConcurrencyLimits``; giving both is an error, as in HTCondor."""
    limits, limits_expr = r.get("concurrency_limits"), r.get("concurrency_limits_expr")
    given = [c for c, t in (("concurrency_limits", limits), ("concurrency_limits_expr", limits_expr))
             if t and t.strip()]
    if len(given) == 2:
        raise fail("concurrency_limits and concurrency_limits_expr can't be used together; "
                   "keep one", "concurrency_limits_expr")
    if limits and limits.strip():
        entries = sorted(e.lower() for e in re.split(r"[,\s]+", limits.strip()) if e)
        try:
            parse_limits(",".join(entries))
        except LimitSyntaxError as exc:
            raise fail(str(exc), "concurrency_limits") from None
        r["ConcurrencyLimits"] = ",".join(entries)
    elif limits_expr and limits_expr.strip():
        r["ConcurrencyLimits"] = to_value(limits_expr, "concurrency_limits_expr")


def accounting(r: RuleReader) -> None:
    group = string_value(r.get("accounting_group") or "")
    user = string_value(r.get("accounting_group_user") or "")
    nice = _given_boolean(r, "nice_user")
    if nice:
        r["MaxJobRetirementTime"] = 0
        group = group or "nice-user"
    if not group and not user:
        return
    user = user or (r.context.owner or "")
    if group:
        r["AcctGroup"] = group
    r["AcctGroupUser"] = user
    r["AccountingGroup"] = f"{group}.{user}" if group else user


def retries(r: RuleReader) -> None:
    max_retries = r.get("max_retries")
    until = r.get("retry_until")
    success = r.get("success_exit_code")
    if not any(t and t.strip() for t in (max_retries, until, success)):
        return
    if max_retries and max_retries.strip():
        value = to_value(max_retries, "max_retries")
        if not isinstance(value, int) or isinstance(value, bool):
            raise fail(f"{max_retries.strip()!r} is not an integer", "max_retries")
        r["JobMaxRetries"] = value
    else:
        r["JobMaxRetries"] = 2
    text = "NumJobCompletions > JobMaxRetries || ExitCode is "
    if success and success.strip():
        r["JobSuccessExitCode"] = _long_param(success, "success_exit_code")
        text += "JobSuccessExitCode"
    else:
        text += "0"
    if until and until.strip():
        value = to_value(until, "retry_until")
        text += f" || ExitCode is {value}" if type(value) is int else f" || {until.strip()}"
    user = r.get("on_exit_remove")
    if user and user.strip():
        text += f" || {user.strip()}"
    r["OnExitHold"] = False
    r["OnExitRemove"] = to_value(text, "on_exit_remove")


#: commands copied to one attribute: "expr" (a ClassAd value), "string", "signal"
SIMPLE_COMMANDS: dict[str, tuple[str, str]] = {
    "rank": ("Rank", "expr"), "leave_in_queue": ("LeaveJobInQueue", "expr"),
    "on_exit_hold": ("OnExitHold", "expr"), "on_exit_remove": ("OnExitRemove", "expr"),
    "on_exit_hold_reason": ("OnExitHoldReason", "expr"),
    "on_exit_hold_subcode": ("OnExitHoldSubCode", "expr"),
    "periodic_hold": ("PeriodicHold", "expr"), "periodic_hold_reason": ("PeriodicHoldReason", "expr"),
    "periodic_hold_subcode": ("PeriodicHoldSubCode", "expr"),
    "periodic_release": ("PeriodicRelease", "expr"), "periodic_remove": ("PeriodicRemove", "expr"),
    "periodic_vacate": ("PeriodicVacate", "expr"),
    "job_max_vacate_time": ("JobMaxVacateTime", "expr"),
    "max_job_retirement_time": ("MaxJobRetirementTime", "expr"),
    "max_idle": ("JobMaterializeMaxIdle", "expr"),
    "description": ("JobDescription", "string"), "batch_name": ("JobBatchName", "string"),
    "want_graceful_removal": ("WantGracefulRemoval", "expr"),
    "kill_sig": ("KillSig", "signal"), "kill_sig_timeout": ("KillSigTimeout", "expr"),
    "hold_kill_sig": ("HoldKillSig", "signal"), "remove_kill_sig": ("RemoveKillSig", "signal"),
    "coresize": ("CoreSize", "int"), "stack_size": ("StackSize", "expr"),
    "job_lease_duration": ("JobLeaseDuration", "expr"),
    "match_list_length": ("LastMatchListLength", "int"),
    "noop_job": ("IsNoopJob", "expr"), "noop_job_exit_code": ("NoopJobExitCode", "expr"),
    "noop_job_exit_signal": ("NoopJobExitSignal", "expr"),
    "submit_event_notes": ("SubmitEventNotes", "string"),
    "job_ad_information_attrs": ("JobAdInformationAttrs", "string"),
    "ulog_execute_attrs": ("UserLogExecuteEventAttrs", "string"),
    "job_machine_attrs": ("JobMachineAttrs", "string"),
    "job_machine_attrs_history_length": ("JobMachineAttrsHistoryLength", "int"),
    "allowed_execute_duration": ("AllowedExecuteDuration", "expr"),
    "allowed_job_duration": ("AllowedJobDuration", "expr"),
    "keep_claim_idle": ("KeepClaimIdle", "expr"), "next_job_start_delay": ("NextJobStartDelay", "expr"),
    "skip_if_dataflow": ("SkipIfDataflow", "bool"), "manifest": ("ManifestDesired", "bool"),
    "manifest_dir": ("ManifestDir", "string"),
    "erase_output_and_error_on_restart": ("EraseOutputAndErrorOnRestart", "bool"),
    "starter_debug": ("JobStarterDebug", "string"),
    "run_as_owner": ("RunAsOwner", "bool"), "load_profile": ("LoadProfile", "bool"),
    "remote_initialdir": ("RemoteIwd", "string"), "scitokens_file": ("ScitokensFile", "string"),
    "notify_user": ("NotifyUser", "string"),
    "encrypt_input_files": ("EncryptInputFiles", "string"),
    "encrypt_output_files": ("EncryptOutputFiles", "string"),
    "dont_encrypt_input_files": ("DontEncryptInputFiles", "string"),
    "dont_encrypt_output_files": ("DontEncryptOutputFiles", "string"),
    "encrypt_execute_directory": ("EncryptExecuteDirectory", "bool"),
    "preserve_relative_paths": ("PreserveRelativePaths", "bool"),
    "checkpoint_exit_code": ("SuccessCheckpointExitCode", "int"),
    "docker_image": ("DockerImage", "string"), "docker_network_type": ("DockerNetworkType", "string"),
    "docker_pull_policy": ("DockerPullPolicy", "string"),
    "docker_override_entrypoint": ("DockerOverrideEntrypoint", "bool"),
    "container_service_names": ("ContainerServiceNames", "string"),
    "jar_files": ("JarFiles", "string"), "java_vm_args": ("JavaVMArgs", "string"),
    "stream_output": (None, ""), "stream_error": (None, ""), "stream_input": (None, ""),
    "deferral_time": ("DeferralTime", "expr"), "deferral_window": ("DeferralWindow", "expr"),
    "deferral_prep_time": ("DeferralPrepTime", "expr"),
    "cron_minute": ("CronMinute", "string"), "cron_hour": ("CronHour", "string"),
    "cron_day_of_month": ("CronDayOfMonth", "string"), "cron_month": ("CronMonth", "string"),
    "cron_day_of_week": ("CronDayOfWeek", "string"),
    "batch_id": ("JobBatchId", "string"), "jobset": ("JobSetName", "string"),
    "submit_event_user_notes": ("SubmitEventUserNotes", "string"),
    "max_transfer_input_mb": ("MaxTransferInputMB", "expr"),
    "max_transfer_output_mb": ("MaxTransferOutputMB", "expr"),
    "want_io_proxy": ("WantIOProxy", "bool"),
    "file_remaps": ("FileRemaps", "expr"), "buffer_files": ("BufferFiles", "expr"),
    "buffer_size": ("BufferSize", "expr"), "buffer_block_size": ("BufferBlockSize", "expr"),
    "fetch_files": ("FetchFiles", "string"), "compress_files": ("CompressFiles", "string"),
    "append_files": ("AppendFiles", "string"), "local_files": ("LocalFiles", "string"),
    "dagman_job_id": ("DAGManJobId", "uint"), "dag_node_name": ("DAGNodeName", "string"),
    "parallel_script_shadow": ("ParallelScriptShadow", "string"),
    "parallel_script_starter": ("ParallelScriptStarter", "string"),
    "core_size": ("CoreSize", "int"),
}


def signal_name(text: str, command: str) -> str:
    t = string_value(text)
    if t.isdigit():
        if int(t) not in SIGNALS:
            raise fail(f"{t} is not a signal number this system knows", command)
        return SIGNALS[int(t)]
    name = t.upper() if t.upper().startswith("SIG") else "SIG" + t.upper()
    if name not in SIGNAL_NAMES:
        raise fail(f"{t!r} is not a signal (use a name such as SIGTERM or a number)", command)
    return name


def credentials(r: RuleReader) -> None:
    proxy = r.get("x509userproxy")
    if proxy and proxy.strip():
        path = in_iwd(r, string_value(proxy))
        if not r.context.self_contained and not os.path.isfile(path):
            raise fail(f"the proxy file {proxy.strip()!r} does not exist", "x509userproxy")
        r["x509userproxy"] = string_value(proxy)
    if is_true(r.get("use_scitokens")):
        token = r.get("scitokens_file")
        environ = r.context.environ
        path = in_iwd(r, string_value(token)) if token else environ.get("BEARER_TOKEN_FILE")
        if not path or not r.context.self_contained and not os.path.isfile(path):
            raise fail("use_scitokens = true needs a token file (scitokens_file or "
                       "BEARER_TOKEN_FILE) that exists", "use_scitokens")


def simple(r: RuleReader) -> None:
    for command, (attr, kind) in SIMPLE_COMMANDS.items():
        if attr is None:
            continue
        if command == "on_exit_remove" and r.attr("JobMaxRetries") is not None:
            continue
        text = r.get(command)
        if text is None or not text.strip():
            continue
        if kind == "string":
            r[attr] = string_value(text)
        elif kind == "bool":
            r[attr] = _boolean_param(text, command)
        elif kind in ("int", "uint"):
            r[attr] = _integer(text, command, negative=kind == "int")
        elif kind == "signal":
            r[attr] = signal_name(text, command)
        else:
            r[attr] = to_value(text, command)
    if r.attr("SuccessCheckpointExitCode") is not None:
        r["WantFTOnCheckpoint"] = True
    history = r.attr("JobMachineAttrsHistoryLength")
    if type(history) is int and not 0 <= history <= MAX_INT:
        raise fail(f"{history} is out of bounds 0 to {MAX_INT}", "job_machine_attrs_history_length")
    preferences(r)
    container_ports(r)
    deferral(r)


MAX_INT = (1 << 31) - 1


def preferences(r: RuleReader) -> None:
    """SubmitHash::SetRank: ``preferences`` is another name for ``rank``; giving both is
    an error."""
    text = r.get("preferences")
    if not text or not text.strip():
        return
    if (r.get("rank") or "").strip():
        raise fail("preferences and rank may not both be given; keep one", "preferences")
    r["Rank"] = to_value(text, "preferences")


def container_ports(r: RuleReader) -> None:
    """SubmitHash::SetContainerSpecial: every name in container_service_names needs a
    ``<name>_container_port`` from 0 to 65535."""
    if universe_of(r) not in ("docker", "container"):
        return
    for name in file_list(r.get("container_service_names")):
        command = f"{name}_container_port"
        text = r.get(command)
        try:
            port = long_param(text) if text and text.strip() else -1
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:
            raise fail(f"the container service {name!r} needs a port from 0 to 65535 in "
                       f"{command}", command if text else "container_service_names")
        r[f"{name}_ContainerPort"] = port


def deferral(r: RuleReader) -> None:
    """SubmitHash::SetJobDeferral: a literal deferral time, window or prep time must be
    a non-negative integer; a deferred or cron job gets DeferralWindow 0 and
    DeferralPrepTime 300 unless given (cron_window and cron_prep_time win over the
    deferral_ forms) and ScheddInterval; scheduler universe jobs cannot be deferred."""
    cron = any(r.get(c) for c in ("cron_minute", "cron_hour", "cron_day_of_month",
                                  "cron_month", "cron_day_of_week"))
    _non_negative(r, "deferral_time", "DeferralTime")
    if not (cron or r.get("deferral_time")):
        return
    if universe_of(r) == "scheduler":
        raise fail("scheduler universe jobs cannot be deferred (no starter runs them); use the "
                   "local universe", "cron_minute" if cron else "deferral_time")
    for command, alternate, attr, default in (("cron_window", "deferral_window", "DeferralWindow", 0),
                                              ("cron_prep_time", "deferral_prep_time", "DeferralPrepTime", 300)):
        given = command if (r.get(command) or "").strip() else alternate
        if not _non_negative(r, given, attr):
            r[attr] = default
    r["ScheddInterval"] = 300


def _non_negative(r: RuleReader, command: str, attr: str) -> bool:
    """Sets ``attr`` from ``command`` when given; a literal value must be an integer >= 0."""
    text = r.get(command)
    if text is None or not text.strip():
        return False
    value = to_value(text, command)
    if not isinstance(value, Expr) and (type(value) is not int or value < 0):
        raise fail(f"{text.strip()!r} must evaluate to a non-negative integer", command)
    r[attr] = value
    return True


def requirements(r: RuleReader) -> None:
    r["Requirements"] = requirements_value(r, universe_of(r))


def custom_attributes(r: RuleReader) -> None:
    for key in r.keys():
        if key.startswith("my."):
            text = r.get(key)
            r[r.line_of(key).name[3:]] = to_value(text or "", r.line_of(key).name)


#: the rules in the order they run; later rules may override earlier ones
RULES = [base, machine_count, universe, gang_size, executable, iwd, grid, arguments, environment, io, container, transfer,
         requests, policy, credentials, simple, requirements, custom_attributes]
