"""All SQL of the schedd: the job queue (clusters and their procs' differences) and
the history table, in one SQLite file in WAL mode through sqlite-utils.

Every write happens inside :meth:`QueueDatabase.atomic`, so a request commits once
and a crash leaves either all of it or none of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator

import attrs
import sqlite_utils

from schedd.queue.stored import history_text, pair_fragments

#: Rows fetched per page while streaming; keeps reads short so writes can interleave.
PAGE_SIZE = 2000

#: Made once the jobs table has its submitter column (a queue of an older Roost gets it
#: in :meth:`QueueDatabase.add_submitter_column`).
_SUBMITTER_INDEX = "CREATE INDEX IF NOT EXISTS jobs_by_submitter ON jobs (submitter, status, owner)"

#: Finds the history rows of a base when unreferenced bases are dropped.
_HISTORY_BASE_INDEX = "CREATE INDEX IF NOT EXISTS history_by_base ON history (base) WHERE base IS NOT NULL"
#: Finds one job's history records (:meth:`QueueDatabase.history_attrs`: the event log of a
#: job gone from the queue) without a scan of every record; made on a queue of an older Roost too.
_HISTORY_JOB_INDEX = "CREATE INDEX IF NOT EXISTS history_by_job ON history (cluster_id, proc_id)"
#: A history row's columns, its base's text joined (None for a row holding the whole ad).
_HISTORY_READ = ("SELECT h.id, h.cluster_id, h.proc_id, h.left_queue, h.attrs, h.base, b.attrs FROM history h "
                 "LEFT JOIN history_bases b ON b.id = h.base")

#: Jobs per submitter, owner and status, in the order of their index (no sort).
_COUNT_BY_SUBMITTER = ("SELECT submitter, owner, status, COUNT(*) FROM jobs{where} "
                       "GROUP BY submitter, status, owner")
#: How long a worker thread's connection of its own waits on a lock (a WAL reader or
#: a PASSIVE checkpoint waits only while the file is being recovered).
_SIDE_BUSY_SECONDS = 5.0

#: The columns a proc is read with.
_JOB_COLUMNS = "cluster_id, proc_id, status, owner, attrs, submitter"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS queue_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS clusters (cluster_id INTEGER PRIMARY KEY, attrs TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, status INTEGER NOT NULL,
    owner TEXT, attrs TEXT NOT NULL, submitter TEXT, PRIMARY KEY (cluster_id, proc_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs (owner, status);
CREATE INDEX IF NOT EXISTS jobs_by_status ON jobs (status);
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL,
    owner TEXT, left_queue REAL NOT NULL, attrs TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_by_time ON history (left_queue);
CREATE TABLE IF NOT EXISTS history_bases (id INTEGER PRIMARY KEY AUTOINCREMENT, digest BLOB NOT NULL UNIQUE, attrs TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS running_claims (
    cluster_id INTEGER NOT NULL, proc_id INTEGER NOT NULL, claim_id TEXT NOT NULL, slot_name TEXT NOT NULL,
    startd_address TEXT NOT NULL, owner TEXT NOT NULL, lease REAL NOT NULL, claimed_at REAL NOT NULL,
    pool TEXT, PRIMARY KEY (cluster_id, proc_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS factories (
    cluster_id INTEGER PRIMARY KEY, digest TEXT NOT NULL, active INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS incoming_clusters (cluster_id INTEGER PRIMARY KEY);
"""


@attrs.frozen
class RunningClaim:
    """What a restarted schedd needs to ask a startd for a job again: the claim it runs
    on (its ClaimId, slot and startd), whose it is and the job's lease."""

    cluster_id: int
    proc_id: int
    claim_id: str = attrs.field(repr=False)
    slot_name: str
    startd_address: str
    owner: str
    lease: float
    claimed_at: float
    #: The other pool the slot is in (a flocked job, claimed with that pool's token), else None.
    pool: str | None = None


@attrs.frozen
class JobRow:
    """One proc as stored: its ids, status and owner columns, its differences and the
    submitter it is negotiated under (its AccountingGroup, else its Owner)."""

    cluster_id: int
    proc_id: int
    status: int
    owner: str | None
    attrs: str
    submitter: str | None = None


@attrs.frozen
class HistoryRow:
    """One finished job as stored in the history table."""

    id: int
    cluster_id: int
    proc_id: int
    left_queue: float
    attrs: str


@contextlib.contextmanager
def _side_connection(path: str, setting: str) -> Iterator[sqlite3.Connection]:
    """A connection of a worker thread's own to the queue's file, with one PRAGMA
    ``setting`` made, closed after use (a connection belongs to the thread that made it)."""
    with contextlib.closing(sqlite3.connect(path, timeout=_SIDE_BUSY_SECONDS)) as connection:
        connection.execute(setting)
        yield connection


def _job_row(row: tuple) -> JobRow:
    return JobRow(*row)


class QueueDatabase:
    """The queue's SQLite file. ``QueueDatabase(path)`` opens (creating) a file in WAL
    mode; ``QueueDatabase(None)`` is an in-memory database for tests.

    :param path: the file, or None for memory
    :param synchronous: SQLite's ``synchronous`` setting; NORMAL survives a killed
        process, FULL also a lost machine
    """

    def __init__(self, path: str | os.PathLike | None, synchronous: str = "NORMAL") -> None:
        if synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise ValueError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        self.db = sqlite_utils.Database(memory=True) if path is None else sqlite_utils.Database(path)
        self._path = None if path is None else os.fspath(path)
        if path is not None:
            self.db.enable_wal()
        self.db.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self._synchronous = synchronous.upper()
        self.db.executescript(_SCHEMA)
        if "pool" not in self.db["running_claims"].columns_dict:  # a queue kept by an older Roost
            self.db.execute("ALTER TABLE running_claims ADD COLUMN pool TEXT")
        if "base" not in self.db["history"].columns_dict:  # its rows all hold whole ads
            self.db.execute("ALTER TABLE history ADD COLUMN base INTEGER")
        self.db.execute(_HISTORY_BASE_INDEX)
        self.db.execute(_HISTORY_JOB_INDEX)
        self._bases: dict[int, dict[str, str]] = {}
        #: Clusters being stored chunk by chunk, not yet acknowledged: no read sees them.
        self._incoming: set[int] = set()
        #: The SQL condition hiding them ("" when there is none, so reads cost nothing more).
        self._hidden = ""
        self.dropped_incoming = self.drop_incoming()
        #: False for a queue kept by an older Roost until :meth:`add_submitter_column` ran.
        self.has_submitter_column = "submitter" in self.db["jobs"].columns_dict
        if self.has_submitter_column:
            self.db.execute(_SUBMITTER_INDEX)

    def add_submitter_column(self, submitter_of: Callable[[str, str], str | None]) -> int:
        """Give a queue kept by an older Roost its submitter column, filled in for every
        proc from ``submitter_of(cluster attrs, proc attrs)``, and its index, all in one
        transaction (a crash leaves the old queue, migrated again on the next start).
        Returns how many procs were filled in."""
        if self.has_submitter_column:
            return 0
        with self.atomic():
            self.db.execute("ALTER TABLE jobs ADD COLUMN submitter TEXT")
            clusters = dict(self.db.execute("SELECT cluster_id, attrs FROM clusters").fetchall())
            rows = [(submitter_of(clusters.get(cluster_id, "[]"), text), cluster_id, proc_id)
                    for cluster_id, proc_id, text in self.db.execute("SELECT cluster_id, proc_id, attrs FROM jobs")]
            self.db.conn.executemany("UPDATE jobs SET submitter = ? WHERE cluster_id = ? AND proc_id = ?", rows)
            self.db.execute(_SUBMITTER_INDEX)
        self.has_submitter_column = True
        return len(rows)

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    @contextlib.contextmanager
    def atomic(self) -> Iterator["QueueDatabase"]:
        """One transaction (nested calls become savepoints)."""
        with self.db.atomic():
            yield self

    # --- incoming clusters -------------------------------------------------------
    def mark_incoming(self, cluster_id: int) -> None:
        """Hide a cluster from every read while its procs are stored over several
        transactions (call inside the transaction that stores its first rows)."""
        self.db.execute("INSERT INTO incoming_clusters (cluster_id) VALUES (?)", [cluster_id])
        self._set_incoming(self._incoming | {cluster_id})

    def acknowledge_incoming(self, cluster_id: int) -> None:
        """Show a cluster whose last procs are stored (call inside the transaction that
        stores them, so it appears whole when that commits)."""
        self.db.execute("DELETE FROM incoming_clusters WHERE cluster_id = ?", [cluster_id])
        self._set_incoming(self._incoming - {cluster_id})

    def drop_incoming(self, only: int | None = None) -> list[int]:
        """Drop every incoming cluster (or only cluster ``only``) with its procs, in one
        transaction: it was never acknowledged (the schedd stopped or the submit failed
        before its last procs were stored). Returns the clusters dropped."""
        with self.atomic():
            found = [row[0] for row in self.db.execute("SELECT cluster_id FROM incoming_clusters ORDER BY cluster_id")
                     if only is None or row[0] == only]
            for cluster_id in found:
                for table in ("jobs", "clusters", "incoming_clusters"):
                    self.db.execute(f"DELETE FROM {table} WHERE cluster_id = ?", [cluster_id])
        self._set_incoming(self._incoming - {only} if only is not None else set())
        return found

    def _set_incoming(self, clusters: set[int]) -> None:
        self._incoming = clusters
        self._hidden = f"cluster_id NOT IN ({','.join(str(int(c)) for c in sorted(clusters))})" if clusters else ""

    def _and_visible(self, where: str) -> str:
        """``where`` and, while a cluster is incoming, the condition hiding it."""
        return f"{where} AND {self._hidden}" if self._hidden else where

    def _where_visible(self) -> str:
        """A WHERE clause hiding incoming clusters, or "" when there is none."""
        return f" WHERE {self._hidden}" if self._hidden else ""

    # --- running claims ---------------------------------------------------------
    def save_running_claim(self, claim: RunningClaim) -> None:
        """Remember the claim a job runs on (replacing an older one of the job's)."""
        with self.atomic():
            self.db.execute("INSERT OR REPLACE INTO running_claims VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            attrs.astuple(claim))

    def delete_running_claim(self, cluster_id: int, proc_id: int) -> None:
        """Forget the claim of a job that no longer runs."""
        with self.atomic():
            self.db.execute("DELETE FROM running_claims WHERE cluster_id = ? AND proc_id = ?", [cluster_id, proc_id])

    def running_claims(self) -> list[RunningClaim]:
        """Every remembered claim, in job order."""
        rows = self.db.execute("SELECT * FROM running_claims ORDER BY cluster_id, proc_id").fetchall()
        return [RunningClaim(*row) for row in rows]

    # --- ids ------------------------------------------------------------------
    def allocate_cluster_id(self) -> int:
        """Take the next ClusterId and persist its successor (call inside atomic)."""
        row = self.db.execute("SELECT value FROM queue_meta WHERE name = 'next_cluster_id'").fetchone()
        cluster_id = row[0] if row else 1
        self.db.execute("INSERT OR REPLACE INTO queue_meta (name, value) VALUES ('next_cluster_id', ?)",
                        [cluster_id + 1])
        return cluster_id

    def reserve_cluster_id(self) -> int:
        """Take the next ClusterId for a cluster stored later, marked incoming (hidden,
        and dropped at start-up unless acknowledged) in its own transaction."""
        with self.atomic():
            cluster_id = self.allocate_cluster_id()
            self.mark_incoming(cluster_id)
        return cluster_id

    def peek_cluster_id(self) -> int:
        """The ClusterId the next submit will get."""
        row = self.db.execute("SELECT value FROM queue_meta WHERE name = 'next_cluster_id'").fetchone()
        return row[0] if row else 1

    # --- clusters and jobs --------------------------------------------------
    def insert_cluster(self, cluster_id: int, attrs_text: str) -> None:
        """Store a cluster's common attributes."""
        self.db.execute("INSERT INTO clusters (cluster_id, attrs) VALUES (?, ?)", [cluster_id, attrs_text])

    def insert_jobs(self, rows: Iterable[tuple[int, int, int, str | None, str, str | None]]) -> None:
        """Store procs as ``(cluster_id, proc_id, status, owner, attrs, submitter)`` tuples."""
        self.db.conn.executemany(f"INSERT INTO jobs ({_JOB_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", rows)

    def get_cluster_attrs(self, cluster_id: int) -> str | None:
        """A cluster's stored common attributes, or None."""
        if cluster_id in self._incoming:
            return None
        row = self.db.execute("SELECT attrs FROM clusters WHERE cluster_id = ?", [cluster_id]).fetchone()
        return row[0] if row else None

    def get_job(self, cluster_id: int, proc_id: int) -> JobRow | None:
        """One proc's row, or None."""
        if cluster_id in self._incoming:
            return None
        row = self.db.execute(
            f"SELECT {_JOB_COLUMNS} FROM jobs WHERE cluster_id = ? AND proc_id = ?",
            [cluster_id, proc_id]).fetchone()
        return _job_row(row) if row else None

    def history_attrs(self, cluster_id: int, proc_id: int) -> str | None:
        """The stored attributes of the newest history record of one job, or None."""
        row = self.db.execute(f"{_HISTORY_READ} WHERE h.cluster_id = ? AND h.proc_id = ? ORDER BY h.id DESC LIMIT 1",
                              [cluster_id, proc_id]).fetchone()
        return self._history_row(row).attrs if row else None

    def find_jobs(self, cluster_id: int | None = None, owner: str | None = None,
                  page_size: int = PAGE_SIZE, status: int | None = None,
                  first_page: int | None = None, submitter: str | None = None) -> Iterator[JobRow]:
        """Every proc (of one cluster, one owner, one submitter, one status) in id order,
        read page by page; pages start at ``first_page`` rows (when given) and double up
        to ``page_size``, so a reader that wants the first few reads only those."""
        where, params = [], []
        # without a status (or cluster), an owner's or submitter's rows are read in id order
        # by key: their indexes (by status next) would have every page sort all their rows
        by_key = "" if status is not None or cluster_id is not None else "+"
        for column, value in (("cluster_id", cluster_id), (by_key + "owner", owner), (by_key + "submitter", submitter)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if status is not None:
            where.append("status = ?")
            params.append(int(status))
        after = (-1, -1)
        size = min(first_page or page_size, page_size)
        while True:
            clauses = where + ["(cluster_id, proc_id) > (?, ?)"]
            sql = (f"SELECT {_JOB_COLUMNS} FROM jobs WHERE "
                   + self._and_visible(" AND ".join(clauses)) + " ORDER BY cluster_id, proc_id LIMIT ?")
            rows = self.db.execute(sql, params + list(after) + [size]).fetchall()
            for row in rows:
                yield _job_row(row)
            if len(rows) < size:
                return
            after = (rows[-1][0], rows[-1][1])
            size = min(size * 2, page_size)

    def jobs_after(self, after: tuple[int, int], limit: int, cluster_id: int | None = None) -> list[JobRow]:
        """At most ``limit`` procs (of one cluster) whose ids follow ``after``, in id order."""
        where = self._and_visible("(cluster_id, proc_id) > (?, ?)" + ("" if cluster_id is None else " AND cluster_id = ?"))
        params = [*after] + ([] if cluster_id is None else [cluster_id])
        rows = self.db.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE {where} ORDER BY cluster_id, proc_id LIMIT ?",
                               params + [limit]).fetchall()
        return [_job_row(row) for row in rows]

    def proc_texts_naming(self, cluster_id: int, names: Iterable[str]) -> list[str]:
        """The stored texts of the cluster's procs that may set one of ``names`` (their
        text holds the quoted name, any case); the caller decodes them to be sure."""
        names = list(names)
        if not names or cluster_id in self._incoming:
            return []
        if any(not name.isalnum() for name in names):
            raise ValueError(f"attribute names to look for must be letters and digits, got {names!r}")
        test = " OR ".join("attrs LIKE ?" for _ in names)
        return [row[0] for row in self.db.execute(f"SELECT attrs FROM jobs WHERE cluster_id = ? AND ({test})",
                                                  [cluster_id] + [f'%"{name}"%' for name in names])]

    def find_other_owner(self, cluster_id: int, owner: str) -> JobRow | None:
        """One proc of the cluster that ``owner`` does not own, or None."""
        if cluster_id in self._incoming:
            return None
        row = self.db.execute(f"SELECT {_JOB_COLUMNS} FROM jobs WHERE cluster_id = ? AND owner IS NOT ? LIMIT 1",
                              [cluster_id, owner]).fetchone()
        return _job_row(row) if row else None

    def scan_job_texts(self, page_size: int = PAGE_SIZE) -> Iterator[tuple[int, int, str]]:
        """Every proc as ``(cluster_id, proc_id, attrs)`` in id order, read page by page
        by key (no cursor stays open between pages) for queries that read only the text."""
        after = (-1, -1)
        while True:
            where = self._and_visible("(cluster_id, proc_id) > (?, ?)")
            rows = self.db.execute(f"SELECT cluster_id, proc_id, attrs FROM jobs WHERE {where} "
                                   "ORDER BY cluster_id, proc_id LIMIT ?", [*after, page_size]).fetchall()
            yield from rows
            if len(rows) < page_size:
                return
            after = rows[-1][:2]

    def set_job(self, cluster_id: int, proc_id: int, status: int, owner: str | None, attrs_text: str,
                submitter: str | None = None) -> None:
        """Replace one proc's status, owner, differences and submitter."""
        self.db.execute("UPDATE jobs SET status = ?, owner = ?, attrs = ?, submitter = ? "
                        "WHERE cluster_id = ? AND proc_id = ?", [status, owner, attrs_text, submitter, cluster_id, proc_id])

    def set_jobs(self, rows: list[tuple[int, str | None, str, str | None, int, int]]) -> None:
        """:meth:`set_job` for many procs in one statement: rows of ``(status, owner,
        attrs, submitter, cluster_id, proc_id)``."""
        self.db.conn.executemany("UPDATE jobs SET status = ?, owner = ?, attrs = ?, submitter = ? "
                                 "WHERE cluster_id = ? AND proc_id = ?", rows)

    def delete_job(self, cluster_id: int, proc_id: int) -> bool:
        """Drop one proc, and its cluster once no proc is left and no factory will make
        another; returns whether the cluster went too."""
        self.db.execute("DELETE FROM jobs WHERE cluster_id = ? AND proc_id = ?", [cluster_id, proc_id])
        return self.delete_cluster_if_empty(cluster_id)

    def delete_cluster_if_empty(self, cluster_id: int) -> bool:
        """Drop a cluster (and its finished factory) when it has no proc and no running
        factory (HTCondor keeps a factory's cluster ad until the factory is complete);
        returns whether it went."""
        if self.db.execute("SELECT 1 FROM jobs WHERE cluster_id = ? LIMIT 1", [cluster_id]).fetchone():
            return False
        if self.db.execute("SELECT 1 FROM factories WHERE cluster_id = ? AND active = 1", [cluster_id]).fetchone():
            return False
        self.db.execute("DELETE FROM clusters WHERE cluster_id = ?", [cluster_id])
        self.db.execute("DELETE FROM factories WHERE cluster_id = ?", [cluster_id])
        return True

    def set_cluster_attrs(self, cluster_id: int, attrs_text: str) -> None:
        """Replace a cluster's stored common attributes."""
        self.db.execute("UPDATE clusters SET attrs = ? WHERE cluster_id = ?", [attrs_text, cluster_id])

    # --- job factories ------------------------------------------------------
    def insert_factory(self, cluster_id: int, digest: str) -> None:
        """Store a factory's digest (what it makes its procs from), running."""
        self.db.execute("INSERT INTO factories (cluster_id, digest, active) VALUES (?, ?, 1)", [cluster_id, digest])

    def active_factories(self) -> list[tuple[int, str]]:
        """``(cluster_id, digest)`` of every factory that may still make procs."""
        return self.db.execute("SELECT cluster_id, digest FROM factories WHERE active = 1 "
                               "ORDER BY cluster_id").fetchall()

    def is_active_factory(self, cluster_id: int) -> bool:
        """Whether the cluster has a factory that may still make procs."""
        return self.db.execute("SELECT 1 FROM factories WHERE cluster_id = ? AND active = 1",
                               [cluster_id]).fetchone() is not None

    def factory_cluster_ids(self) -> list[int]:
        """Every cluster that has (or had) a factory and is still stored."""
        return [r[0] for r in self.db.execute("SELECT cluster_id FROM factories ORDER BY cluster_id")]

    def finish_factory(self, cluster_id: int) -> None:
        """Mark a factory as making no more procs."""
        self.db.execute("UPDATE factories SET active = 0 WHERE cluster_id = ?", [cluster_id])

    def count_cluster_by_status(self, cluster_id: int) -> dict[int, int]:
        """How many procs of one cluster are in each status."""
        if cluster_id in self._incoming:
            return {}
        return dict(self.db.execute("SELECT status, COUNT(*) FROM jobs WHERE cluster_id = ? GROUP BY status",
                                    [cluster_id]).fetchall())

    def count_jobs_by_submitter(self) -> list[tuple[str | None, str | None, int, int]]:
        """``(submitter, owner, status, count)`` for every submitter, owner and status."""
        return self.db.execute(_COUNT_BY_SUBMITTER.format(where=self._where_visible())).fetchall()

    def submitter_counter(self) -> Callable[[], list[tuple[str | None, str | None, int, int]]] | None:
        """:meth:`count_jobs_by_submitter` as a function a worker thread may call (None
        for a queue in memory): it reads the file on a query-only connection of its own,
        so it sees the last committed state, incoming clusters hidden by their table.
        At 100,000 jobs the count reads megabytes of index (65-109 ms on the reactor
        after a large rm, with the pages cold)."""
        if self._path is None:
            return None
        path = self._path
        query = _COUNT_BY_SUBMITTER.format(
            where=" WHERE cluster_id NOT IN (SELECT cluster_id FROM incoming_clusters)")

        def count() -> list[tuple[str | None, str | None, int, int]]:
            with _side_connection(path, "PRAGMA query_only = ON") as reader:
                return reader.execute(query).fetchall()
        return count

    def checkpoint_apart(self) -> Callable[[], tuple[int, int, int]] | None:
        """Take WAL checkpoints away from the queue's connection and return a function that
        makes one on a connection of its own, for a worker thread (None for a queue in
        memory, which has no WAL). By itself SQLite checkpoints inside the commit that
        takes the WAL past 1,000 pages: 10-20 ms of copying and syncing in that commit.
        A PASSIVE checkpoint waits for no one, and the writer goes on appending meanwhile;
        the caller must call the function regularly, or the WAL grows without end. The
        function returns SQLite's (busy, frames in the WAL, frames checkpointed)."""
        if self._path is None:
            return None
        self.db.execute("PRAGMA wal_autocheckpoint = 0")
        path, synchronous = self._path, self._synchronous

        def checkpoint() -> tuple[int, int, int]:
            with _side_connection(path, f"PRAGMA synchronous = {synchronous}") as checkpointer:
                return tuple(checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone())
        return checkpoint

    def count_jobs(self) -> int:
        """How many procs are in the queue."""
        return self.db.execute(f"SELECT COUNT(*) FROM jobs{self._where_visible()}").fetchone()[0]

    def cluster_ids(self) -> list[int]:
        """Every stored cluster id, ascending."""
        return [r[0] for r in self.db.execute(f"SELECT cluster_id FROM clusters{self._where_visible()} "
                                              "ORDER BY cluster_id")]

    # --- history ------------------------------------------------------------
    def history_base(self, cluster_text: str) -> int:
        """The id of the history base holding ``cluster_text`` (a cluster's stored
        attributes as its jobs left), stored now unless an equal one is: history rows
        keep only their proc's final differences beside it, so a large removal writes
        each cluster's common attributes once rather than once per job."""
        digest = hashlib.blake2b(cluster_text.encode(), digest_size=16).digest()
        self.db.execute("INSERT OR IGNORE INTO history_bases (digest, attrs) VALUES (?, ?)", [digest, cluster_text])
        return self.db.execute("SELECT id FROM history_bases WHERE digest = ?", [digest]).fetchone()[0]

    def move_to_history(self, rows: list[tuple[int, int, str | None, float, str, int | None]]) -> set[int]:
        """Append ``(cluster_id, proc_id, owner, left_queue, attrs, base)`` history rows
        (``attrs`` the whole ad when ``base`` is None, else the proc's differences from
        that :meth:`history_base`), drop those procs from the queue, and drop each cluster
        left empty (as :meth:`delete_cluster_if_empty`); returns the clusters that went."""
        self.db.conn.executemany(
            "INSERT INTO history (cluster_id, proc_id, owner, left_queue, attrs, base) VALUES (?, ?, ?, ?, ?, ?)",
            rows)
        self.db.conn.executemany("DELETE FROM jobs WHERE cluster_id = ? AND proc_id = ?",
                                 [(row[0], row[1]) for row in rows])
        return {cluster_id for cluster_id in dict.fromkeys(row[0] for row in rows)
                if self.delete_cluster_if_empty(cluster_id)}

    def find_history(self, page_size: int = PAGE_SIZE) -> Iterator[HistoryRow]:
        """Finished jobs, newest first, read page by page."""
        before = None
        while True:
            if before is None:
                rows = self.db.execute(f"{_HISTORY_READ} ORDER BY h.id DESC LIMIT ?", [page_size]).fetchall()
            else:
                rows = self.db.execute(f"{_HISTORY_READ} WHERE h.id < ? ORDER BY h.id DESC LIMIT ?",
                                       [before, page_size]).fetchall()
            for row in rows:
                yield self._history_row(row)
            if len(rows) < page_size:
                return
            before = rows[-1][0]

    def _history_row(self, row: tuple) -> HistoryRow:
        """A history row as read by :data:`_HISTORY_READ`, its whole ad's text merged from
        its base (each base's pairs kept for the rows after it) and its differences."""
        history_id, cluster_id, proc_id, left_queue, text, base, base_text = row
        if base is not None:
            fragments = self._bases.get(base)
            if fragments is None:
                if len(self._bases) >= 64:
                    self._bases.clear()
                pairs = {name.lower(): (name, value) for name, value in json.loads(base_text or "[]")}
                fragments = self._bases[base] = pair_fragments(pairs)
            text = history_text(fragments, json.loads(text))
        return HistoryRow(history_id, cluster_id, proc_id, left_queue, text)

    def count_history(self) -> int:
        """How many finished jobs the history holds."""
        return self.db.execute("SELECT COUNT(*) FROM history").fetchone()[0]

    def trim_history(self, keep_newest: int | None, left_before: float | None) -> int:
        """Drop all but the newest ``keep_newest`` rows and rows older than ``left_before``,
        and the bases no row uses any more; returns how many rows went."""
        dropped, bases = 0, set()
        if left_before is not None:
            bases.update(self._bases_of("left_queue < ?", left_before))
            dropped += self.db.execute("DELETE FROM history WHERE left_queue < ?", [left_before]).rowcount
        if keep_newest is not None:
            # the id of the newest row to drop, found through the key: no scan of what stays
            cut = self.db.execute("SELECT id FROM history ORDER BY id DESC LIMIT 1 OFFSET ?",
                                  [max(keep_newest, 0)]).fetchone()
            if cut is not None:
                bases.update(self._bases_of("id <= ?", cut[0]))
                dropped += self.db.execute("DELETE FROM history WHERE id <= ?", [cut[0]]).rowcount
        if bases:
            self.db.conn.executemany("DELETE FROM history_bases WHERE id = ? AND NOT EXISTS "
                                     "(SELECT 1 FROM history WHERE base = ?)", [(base, base) for base in bases])
            self._bases.clear()
        return dropped

    def _bases_of(self, where: str, value: float) -> list[int]:
        """The bases the history rows matching ``where`` use."""
        return [row[0] for row in self.db.execute(
            f"SELECT DISTINCT base FROM history WHERE {where} AND base IS NOT NULL", [value])]
