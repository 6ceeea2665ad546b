"""NVIDIA MPS control daemons for ``GPU_SHARING_MODE = mps``: one per card, started and stopped by the startd.

Each card's daemon is ``nvidia-cuda-mps-control -d`` with ``CUDA_VISIBLE_DEVICES`` set to
the card and its own pipe and log directories under ``<LOCAL_DIR>/mps/<card id>``; a job
sharing that card is pointed at them (:func:`startd.gpu_sharing.mps_environment`). When
the startd stops, each daemon is sent ``quit`` on the control program's stdin. Without the
binary (knob ``GPU_MPS_CONTROL``, else found on PATH), the startd logs it once and jobs
run without MPS: never a failed job.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping

import attrs
from twisted.logger import Logger

from daemoncore.config import Config, ConfigError
from startd.gpu_sharing import MpsDirs

MPS_CONTROL = "nvidia-cuda-mps-control"
GPU_MPS_CONTROL = "GPU_MPS_CONTROL"
#: How long the control program may take to fork the daemon, or to tell it to quit.
START_TIMEOUT = 10.0

_log = Logger()


@attrs.frozen
class MpsDaemons:
    """The control daemons this startd started: the control program, and each card's directories and UUID."""

    binary: str | None = None
    dirs: Mapping[str, MpsDirs] = attrs.field(factory=dict)
    uuids: Mapping[str, str] = attrs.field(factory=dict)

    def stop(self) -> None:
        """Ask each daemon to quit (blocking: run it in a thread); failures are logged."""
        stop_mps_daemons(self)


def mps_control(config: Config) -> str | None:
    """The control program: ``GPU_MPS_CONTROL`` (a path), else ``nvidia-cuda-mps-control`` on PATH.

    Raises:
        ConfigError: ``GPU_MPS_CONTROL`` names no executable file.
    """
    given = (config.param(GPU_MPS_CONTROL) or "").strip()
    if not given:
        return shutil.which(MPS_CONTROL)
    if not (os.path.isfile(given) and os.access(given, os.X_OK)):
        raise ConfigError(f"{GPU_MPS_CONTROL} = {given}: not an executable file (the path of {MPS_CONTROL})")
    return given


def mps_dirs(base: str, card_id: str) -> MpsDirs:
    """Where card ``card_id``'s daemon keeps its pipes and logs under ``base``."""
    return MpsDirs(os.path.join(base, card_id, "pipe"), os.path.join(base, card_id, "log"))


def _daemon_env(uuid: str, dirs: MpsDirs) -> dict[str, str]:
    return {**os.environ, "CUDA_VISIBLE_DEVICES": uuid, "CUDA_MPS_PIPE_DIRECTORY": dirs.pipe,
            "CUDA_MPS_LOG_DIRECTORY": dirs.log}


def _control(binary: str, card_id: str, uuid: str, dirs: MpsDirs, args: list[str], stdin: bytes | None,
             doing: str) -> bool:
    """Run the control program for one card; False (logged) when it fails."""
    try:
        done = subprocess.run([binary, *args], input=stdin, env=_daemon_env(uuid, dirs), capture_output=True,
                              timeout=START_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        _log.warn("MPS control daemon for {card} did not {doing}: {why}", card=card_id, doing=doing, why=exc)
        return False
    if done.returncode != 0:
        _log.warn("MPS control daemon for {card} did not {doing}: exit {code}: {err}", card=card_id, doing=doing,
                  code=done.returncode, err=done.stderr.decode(errors="replace").strip()[:500])
        return False
    return True


def start_mps_daemons(cards: Iterable[tuple[str, str]], base: str, binary: str | None) -> MpsDaemons:
    """Start a control daemon for each (card id, uuid) with ``binary``; those that started.

    Runs before the reactor (start-up), so it may block briefly; a card whose daemon fails
    is logged and left without MPS.
    """
    cards = list(cards)
    if not cards:
        return MpsDaemons(binary)
    if binary is None:
        _log.warn("GPU_SHARING_MODE = mps, but {binary} is not on PATH: jobs run without MPS", binary=MPS_CONTROL)
        return MpsDaemons()
    started, uuids = {}, {}
    for card_id, uuid in cards:
        dirs = mps_dirs(base, card_id)
        try:
            os.makedirs(dirs.pipe, exist_ok=True)
            os.makedirs(dirs.log, exist_ok=True)
        except OSError as exc:
            _log.warn("MPS control daemon for {card} did not start: {why}", card=card_id, why=exc)
            continue
        if _control(binary, card_id, uuid, dirs, ["-d"], None, "start"):
            started[card_id], uuids[card_id] = dirs, uuid
    return MpsDaemons(binary, started, uuids)


def stop_mps_daemons(daemons: MpsDaemons) -> None:
    """Ask each daemon to quit (``echo quit | nvidia-cuda-mps-control``); failures are logged."""
    if daemons.binary is None:
        return
    for card_id, dirs in daemons.dirs.items():
        if _control(daemons.binary, card_id, daemons.uuids.get(card_id, card_id), dirs, [], b"quit\n", "stop"):
            _log.info("MPS control daemon for {card} stopped", card=card_id)
