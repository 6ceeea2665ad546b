"""The negotiator's SQLite storage: one row per accounting customer (a submitter or
an accounting group), read and written through sqlite-utils."""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import sqlite_utils
from attrs import frozen

CUSTOMERS = "customers"
META = "meta"
REMOTE_DOMAINS = "remote_domains"
_LAST_UPDATE = "last_update"


@frozen
class CustomerRow:
    """What the accountant remembers about one customer between cycles."""

    name: str
    priority: float
    factor: float | None = None
    accumulated_usage: float = 0.0
    resources_in_use: float = 0.0
    begin_usage_time: float | None = None
    last_usage_time: float | None = None
    floor: float | None = None
    ceiling: float | None = None


_FIELDS = [f.name for f in attrs.fields(CustomerRow)]


def _row_to_customer(row: dict) -> CustomerRow:
    return CustomerRow(**{k: row[k] for k in _FIELDS})


class AccountantDatabase:
    """The accountant's table in one SQLite file (or in memory for tests).

    Mutable by nature: it owns an open connection.
    """

    def __init__(self, path: str | None = None) -> None:
        self.db = sqlite_utils.Database(path) if path else sqlite_utils.Database(memory=True)
        if path:
            self.db.enable_wal()
        if CUSTOMERS not in self.db.table_names():
            self.db[CUSTOMERS].create(
                {"name": str, "priority": float, "factor": float, "accumulated_usage": float,
                 "resources_in_use": float, "begin_usage_time": float, "last_usage_time": float,
                 "floor": float, "ceiling": float},
                pk="name",
            )
        if META not in self.db.table_names():
            self.db[META].create({"key": str, "value": float}, pk="key")
        if REMOTE_DOMAINS not in self.db.table_names():
            self.db[REMOTE_DOMAINS].create({"domain": str}, pk="domain")

    def get_customers(self) -> dict[str, CustomerRow]:
        """Every customer, by name."""
        return {row["name"]: _row_to_customer(row) for row in self.db[CUSTOMERS].rows}

    def get_last_update(self) -> float | None:
        """When usage was last folded into priorities, or None before the first time."""
        rows = list(self.db[META].rows_where("key = ?", [_LAST_UPDATE]))
        return rows[0]["value"] if rows else None

    def set_customers(self, customers: Iterable[CustomerRow], last_update: float | None = None) -> None:
        """Write ``customers`` (and the update time) in one transaction."""
        records = [attrs.asdict(c) for c in customers]
        with self.db.atomic():
            if records:
                self.db[CUSTOMERS].upsert_all(records, pk="name", batch_size=500)
            if last_update is not None:
                self.db[META].upsert({"key": _LAST_UPDATE, "value": last_update}, pk="key")

    def get_remote_domains(self) -> set[str]:
        """The user domains seen flocking in from other pools."""
        return {row["domain"] for row in self.db[REMOTE_DOMAINS].rows}

    def add_remote_domains(self, domains: Iterable[str]) -> None:
        """Remember more user domains of other pools."""
        records = [{"domain": d} for d in domains]
        if records:
            with self.db.atomic():
                self.db[REMOTE_DOMAINS].upsert_all(records, pk="domain")

    def close(self) -> None:
        self.db.close()
