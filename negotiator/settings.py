"""What the negotiator daemon reads from config, checked once before it starts:
cycle timing, where the accountant's SQLite lives, the matchmaker's rank
expressions and the constraints on the ads it fetches."""

from __future__ import annotations

import os

import attrs
from attrs import frozen

from classad import ExprTree
from daemoncore.config import Config, ConfigError
from gpushare.errors import GpuRequestError
from gpushare.placement import parse_policy
from negotiator.accountant import AccountantSettings
from negotiator.concurrency import ConcurrencySettings
from negotiator.cycle import CycleSettings
from negotiator.gpu_matching import parse_node_policy
from negotiator.groups import GroupSettings
from negotiator.matchmaking import DEFAULT_POST_JOB_RANK, DEFAULT_PRE_JOB_RANK, MatchSettings
from negotiator.preemption import DEFAULT_PREEMPTION_RANK, PreemptionSettings

ACCOUNTANT_FILE_NAME = "Accountant.sqlite"


@frozen
class NegotiatorSettings:
    """The negotiator daemon's knobs (HTCondor's names and defaults)."""

    interval: float = 60.0
    min_interval: float = 5.0
    database_file: str = ""
    slot_constraint: str = "true"
    submitter_constraint: str = "true"
    accountant: AccountantSettings = attrs.field(factory=AccountantSettings)
    cycle: CycleSettings = attrs.field(factory=CycleSettings)

    @classmethod
    def from_config(cls, config: Config) -> NegotiatorSettings:
        """The settings in ``config``.

        Raises:
            ConfigError: a value has the wrong type or an expression does not parse,
                naming where it was set.
        """
        interval = config.param_duration("NEGOTIATOR_INTERVAL", 60.0)
        min_interval = config.param_duration("NEGOTIATOR_MIN_INTERVAL", 5.0)
        if interval <= 0:
            raise ConfigError(f"NEGOTIATOR_INTERVAL must be more than 0 seconds, not {interval:g}")
        spool = config.param("SPOOL") or config.param("LOCAL_DIR") or "."
        database = config.param("ACCOUNTANT_DATABASE_FILE") or os.path.join(spool, ACCOUNTANT_FILE_NAME)
        match = MatchSettings(
            pre_job_rank=_expression(config, "NEGOTIATOR_PRE_JOB_RANK", DEFAULT_PRE_JOB_RANK),
            post_job_rank=_expression(config, "NEGOTIATOR_POST_JOB_RANK", DEFAULT_POST_JOB_RANK),
            slot_weight=_expression(config, "SLOT_WEIGHT", "Cpus"),
            gpu_policy=_gpu_policy(config),
            node_policy=_node_policy(config),
        )
        groups = GroupSettings.from_config(config)
        return cls(
            interval=interval,
            min_interval=min(max(min_interval, 0.0), interval),
            database_file=database,
            slot_constraint=_constraint(config, "NEGOTIATOR_SLOT_CONSTRAINT"),
            submitter_constraint=_constraint(config, "NEGOTIATOR_SUBMITTER_CONSTRAINT"),
            accountant=AccountantSettings.from_config(config),
            cycle=CycleSettings(match=match, groups=groups, concurrency=ConcurrencySettings.from_config(config),
                                preemption=_preemption(config, groups.names)),
        )


def _expression(config: Config, name: str, default: str) -> ExprTree:
    """Knob ``name`` parsed as a ClassAd expression (``default`` when unset)."""
    text = config.param(name) or default
    try:
        return ExprTree(text)
    except ValueError as exc:
        raise ConfigError(f"{name}{_origin(config, name)}: not a ClassAd expression: {exc}") from None


def _preemption(config: Config, groups: tuple[str, ...]) -> PreemptionSettings:
    """``NEGOTIATOR_CONSIDER_PREEMPTION``, ``PREEMPTION_REQUIREMENTS``, ``PREEMPTION_RANK``,
    ``PREEMPTION_MIN_RUNTIME[_<group>]``, ``ALLOW_PSLOT_PREEMPTION`` and ``NEGOTIATOR_RECLAIM``.

    Raises:
        ConfigError: an expression does not parse or a duration is negative, naming where it was set.
    """
    per_group = {}
    for group in groups:
        seconds = config.param_duration(f"PREEMPTION_MIN_RUNTIME_{group}")
        if seconds is not None:
            per_group[group] = _not_negative(config, f"PREEMPTION_MIN_RUNTIME_{group}", seconds)
    least = _not_negative(config, "PREEMPTION_MIN_RUNTIME", config.param_duration("PREEMPTION_MIN_RUNTIME", 0.0))
    return PreemptionSettings(
        consider=config.param_bool("NEGOTIATOR_CONSIDER_PREEMPTION", True),
        requirements=_expression(config, "PREEMPTION_REQUIREMENTS", "false"),
        rank=_expression(config, "PREEMPTION_RANK", DEFAULT_PREEMPTION_RANK),
        min_runtime=least, group_min_runtime=per_group,
        allow_pslot=config.param_bool("ALLOW_PSLOT_PREEMPTION", False),
        reclaim=config.param_bool("NEGOTIATOR_RECLAIM", True),
    )


def _not_negative(config: Config, name: str, seconds: float) -> float:
    if seconds < 0:
        raise ConfigError(f"{name}{_origin(config, name)} must be 0 seconds or more, not {seconds:g}")
    return seconds


def _gpu_policy(config: Config) -> tuple[str, ...]:
    """``GPU_PLACEMENT_POLICY``, the card policy of jobs that name none (spread when unset).

    Raises:
        ConfigError: a word is not binpack, spread or numa, naming where it was set.
    """
    try:
        return parse_policy(config.param("GPU_PLACEMENT_POLICY") or "")
    except GpuRequestError as exc:
        raise ConfigError(f"GPU_PLACEMENT_POLICY{_origin(config, 'GPU_PLACEMENT_POLICY')}: {exc}") from None


def _node_policy(config: Config) -> str | None:
    """``NODE_PLACEMENT_POLICY``: binpack or spread. Unset, HTCondor's
    ``NEGOTIATOR_DEPTH_FIRST = true`` (fill each machine before the next) means
    binpack; otherwise None.

    Raises:
        ConfigError: any other value, naming where it was set.
    """
    text = config.param("NODE_PLACEMENT_POLICY")
    if not text or not text.strip():
        return "binpack" if config.param_bool("NEGOTIATOR_DEPTH_FIRST", False) else None
    try:
        return parse_node_policy(text, "NODE_PLACEMENT_POLICY")
    except GpuRequestError as exc:
        raise ConfigError(f"{exc}{_origin(config, 'NODE_PLACEMENT_POLICY')}") from None


def _constraint(config: Config, name: str) -> str:
    """Knob ``name`` as constraint text, checked to parse."""
    text = config.param(name) or "true"
    _expression(config, name, text)
    return text


def _origin(config: Config, name: str) -> str:
    found = config.lookup(name)
    return f" ({found.origin.describe()})" if found is not None else ""
