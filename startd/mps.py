"""NVIDIA MPS control daemons for ``GPU_SHARING_MODE = mps``: one per card, started by the startd.

Each card's daemon is ``nvidia-cuda-mps-control -d`` with ``CUDA_VISIBLE_DEVICES`` set to
the card and its own pipe and log directories under ``<LOCAL_DIR>/mps/<card id>``; a job
sharing that card is pointed at them (:func:`startd.gpu_sharing.mps_environment`). Without
the binary, the startd logs it once and jobs run without MPS: never a failed job.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable

from twisted.logger import Logger

from startd.gpu_sharing import MpsDirs

MPS_CONTROL = "nvidia-cuda-mps-control"
#: How long the daemon may take to fork into the background.
START_TIMEOUT = 10.0

_log = Logger()


def mps_dirs(base: str, card_id: str) -> MpsDirs:
    """Where card ``card_id``'s daemon keeps its pipes and logs under ``base``."""
    return MpsDirs(os.path.join(base, card_id, "pipe"), os.path.join(base, card_id, "log"))


def _daemon_env(uuid: str, dirs: MpsDirs) -> dict[str, str]:
    return {**os.environ, "CUDA_VISIBLE_DEVICES": uuid, "CUDA_MPS_PIPE_DIRECTORY": dirs.pipe,
            "CUDA_MPS_LOG_DIRECTORY": dirs.log}


def start_mps_daemons(cards: Iterable[tuple[str, str]], base: str,
                      binary: str | None = None) -> dict[str, MpsDirs]:
    """Start a control daemon for each (card id, uuid); the directories of those that started.

    Runs before the reactor (start-up), so it may block briefly; a card whose daemon fails
    is logged and left without MPS.
    """
    binary = binary or shutil.which(MPS_CONTROL)
    cards = list(cards)
    if not cards:
        return {}
    if binary is None:
        _log.warn("GPU_SHARING_MODE = mps, but {binary} is not on PATH: jobs run without MPS", binary=MPS_CONTROL)
        return {}
    started = {}
    for card_id, uuid in cards:
        dirs = mps_dirs(base, card_id)
        try:
            os.makedirs(dirs.pipe, exist_ok=True)
            os.makedirs(dirs.log, exist_ok=True)
            done = subprocess.run([binary, "-d"], env=_daemon_env(uuid, dirs), capture_output=True,
                                  timeout=START_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _log.warn("MPS control daemon for {card} did not start: {why}", card=card_id, why=exc)
            continue
        if done.returncode != 0:
            _log.warn("MPS control daemon for {card} did not start: exit {code}: {err}", card=card_id,
                      code=done.returncode, err=done.stderr.decode(errors="replace").strip()[:500])
            continue
        started[card_id] = dirs
    return started


def stop_mps_daemons(daemons: dict[str, MpsDirs], uuids: dict[str, str], binary: str | None = None) -> None:
    """Ask each daemon to quit (``echo quit | nvidia-cuda-mps-control``); failures are logged."""
    binary = binary or shutil.which(MPS_CONTROL)
    if binary is None:
        return
    for card_id, dirs in daemons.items():
        try:
            subprocess.run([binary], input=b"quit\n", env=_daemon_env(uuids.get(card_id, card_id), dirs),
                           capture_output=True, timeout=START_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            _log.warn("MPS control daemon for {card} did not stop: {why}", card=card_id, why=exc)
