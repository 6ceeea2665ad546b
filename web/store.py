"""The web site's only state: a small time series of the pool (jobs running, idle and
held; each accounting group's cores against its quota), sampled every
``WEB_SAMPLE_INTERVAL`` into SQLite so the charts can show the last day.

Bounded twice: samples older than ``MAX_AGE_SECONDS`` are dropped at each write, and
no more than ``max_rows`` samples (and ``MAX_GROUPS`` groups per sample) are kept
whatever the clock says."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping

from attrs import frozen

#: The store keeps at most a week.
MAX_AGE_SECONDS = 7 * 24 * 3600
#: Groups kept per sample; a pool with more shows the largest.
MAX_GROUPS = 64
#: A group name longer than this is cut: names come from job ads.
MAX_NAME = 200


@frozen
class JobSample:
    """The queue's counts at one time."""

    time: float
    running: int
    idle: int
    held: int


@frozen
class GroupSample:
    """One accounting group's cores in use and its quota at one time."""

    time: float
    group: str
    in_use: float
    quota: float


def rows_for_age(interval: float, max_age: float = MAX_AGE_SECONDS) -> int:
    """How many samples a week holds at ``interval`` seconds (at least one)."""
    return max(1, int(max_age // max(interval, 1.0)) + 1)


class HistoryStore:
    """The time series in the SQLite file ``path`` (``:memory:`` in tests); thread-safe."""

    def __init__(self, path: str, max_rows: int, max_age: float = MAX_AGE_SECONDS) -> None:
        if max_rows < 1:
            raise ValueError(f"the history store needs room for at least one sample, not {max_rows}")
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._max_rows = max_rows
        self._max_age = max_age
        with self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS jobs (t REAL PRIMARY KEY, running INT, idle INT, held INT)")
            self._db.execute("CREATE TABLE IF NOT EXISTS groups (t REAL, grp TEXT, in_use REAL, quota REAL)")
            self._db.execute("CREATE INDEX IF NOT EXISTS groups_t ON groups (t)")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def record(self, jobs: JobSample, groups: Mapping[str, tuple[float, float]] = {}) -> None:
        """Add one sample (jobs, and each group's (in use, quota)), then drop what is past the bounds."""
        kept = sorted(groups.items(), key=lambda item: -item[1][0])[:MAX_GROUPS]
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO jobs VALUES (?, ?, ?, ?)",
                             (jobs.time, int(jobs.running), int(jobs.idle), int(jobs.held)))
            self._db.executemany("INSERT INTO groups VALUES (?, ?, ?, ?)",
                                 [(jobs.time, name[:MAX_NAME], float(use), float(quota))
                                  for name, (use, quota) in kept])
            self._trim(jobs.time)

    def _trim(self, now: float) -> None:
        oldest = now - self._max_age
        self._db.execute("DELETE FROM jobs WHERE t < ?", (oldest,))
        self._db.execute("DELETE FROM jobs WHERE t NOT IN (SELECT t FROM jobs ORDER BY t DESC LIMIT ?)",
                         (self._max_rows,))
        self._db.execute("DELETE FROM groups WHERE t < (SELECT COALESCE(MIN(t), 0) FROM jobs) OR t < ?", (oldest,))

    def jobs_since(self, since: float) -> list[JobSample]:
        """The job samples from ``since`` on, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT t, running, idle, held FROM jobs WHERE t >= ? ORDER BY t",
                                    (since,)).fetchall()
        return [JobSample(*row) for row in rows]

    def groups_since(self, since: float) -> list[GroupSample]:
        """The group samples from ``since`` on, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT t, grp, in_use, quota FROM groups WHERE t >= ? ORDER BY t, grp",
                                    (since,)).fetchall()
        return [GroupSample(*row) for row in rows]

    def count(self) -> int:
        """How many job samples are kept."""
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
