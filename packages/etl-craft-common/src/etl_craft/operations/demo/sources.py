"""The demo's three synthetic source systems: customer-support interactions, batch by batch.

Each call of ``write_next_batch`` writes the next batch of every client, in the client's own
format: Alpha exports JSON lines (a document store), Beta CSV events (a message log that
redelivers some events), Gamma gzipped CSV objects (an object store). A batch holds new
interactions, new versions of earlier ones (later status, a rating, a corrected bad row) and a
few rows that break the demo's business rules. Batch ``n`` is the same on every machine: it is
computed from the client and ``n`` alone, so tests derive what the pipelines must produce.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import ClassVar

CLIENTS = ("alpha", "beta", "gamma")
NEW_PER_BATCH = 30
UPDATES_PER_BATCH = 6
FIRST_DAY = datetime(2026, 1, 5, 8, 0)  # naive UTC, as the sources write it
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
REDELIVER_EVERY = 10  # Beta sends every tenth event of a batch twice
LONG_CALL_SECONDS = 4500  # valid, but long enough for the demo's REPORT rule

AREAS = ("BILL", "TECH", "ACCT", "SHIP", "RETN")
AGENTS = tuple(f"AG{number:02d}" for number in range(1, 13))
CUSTOMER_TYPES = ("NEW", "RETURNING", "VIP")
CHANNELS = ("phone", "chat", "email")
STATUSES = ("RESOLVED", "PENDING", "ESCALATED")

FILE_NAMES = {
    "alpha": "interactions_{batch:06d}.jsonl",
    "beta": "events_{batch:06d}.csv",
    "gamma": "{batch:010d}_support_interactions.csv.gz",
}
_BATCH_NUMBER = re.compile(r"(\d{6,10})")


@dataclass(frozen=True)
class Interaction:
    """One version of a support interaction, as the client's system holds it."""

    client: str
    number: int  # the interaction's number within its client, from 1
    customer_id: str | None
    customer_type: str
    agent_id: str
    support_area: str
    channel: str
    opened_at: datetime
    handle_seconds: int
    status: str
    first_contact: bool
    rating: int | None
    updated_at: datetime

    @property
    def interaction_id(self) -> str:
        return f"{self.client.upper()}-{self.number:06d}"

    @property
    def breaks(self) -> str | None:
        """The REJECT rule this version breaks, or None."""
        if self.customer_id is None:
            return "missing_customer"
        if self.rating is not None and not 1 <= self.rating <= 5:
            return "rating_out_of_range"
        if self.handle_seconds < 0:
            return "negative_handle_time"
        return None


@dataclass(frozen=True)
class SourceRow:
    """One row as the source delivers it: its position in the source and the version."""

    position: str
    interaction: Interaction


@dataclass(frozen=True)
class BatchReport:
    schema: ClassVar[str] = "etl-craft/demo-batch/1"
    batch: int
    folder: Path
    files: tuple[str, ...]  # relative to folder
    rows: dict[str, int]  # source rows per client, redeliveries included


def interaction(client: str, number: int) -> Interaction:
    """The first version of interaction ``number``: a few of them break a business rule."""
    rng = random.Random(f"{client}:{number}")  # noqa: S311 - synthetic data, not secrets
    batch = (number - 1) // NEW_PER_BATCH + 1
    index = (number - 1) % NEW_PER_BATCH
    opened = FIRST_DAY + timedelta(days=batch - 1, minutes=7 * index + rng.randrange(5))
    handle = rng.randrange(120, 1800)
    status = rng.choice(STATUSES)
    rating = rng.randrange(1, 6) if status == "RESOLVED" else None
    first = Interaction(
        client=client,
        number=number,
        customer_id=f"C{rng.randrange(1, 400):04d}",
        customer_type=rng.choice(CUSTOMER_TYPES),
        agent_id=rng.choice(AGENTS),
        support_area=rng.choice(AREAS),
        channel=rng.choice(CHANNELS),
        opened_at=opened,
        handle_seconds=handle,
        status=status,
        first_contact=status == "RESOLVED" and rng.random() < 0.7,
        rating=rating,
        updated_at=opened + timedelta(seconds=handle),
    )
    return _flawed(first, number)


def _flawed(first: Interaction, number: int) -> Interaction:
    kind = number % 20
    if kind == 7:
        return replace(first, status="RESOLVED", rating=9)
    if kind == 13:
        return replace(first, handle_seconds=-30, updated_at=first.opened_at)
    if kind == 17:
        return replace(first, customer_id=None)
    if kind == 11:
        seconds = LONG_CALL_SECONDS
        return replace(
            first, handle_seconds=seconds, updated_at=first.opened_at + timedelta(seconds=seconds)
        )
    return first


def updated(client: str, number: int, batch: int, slot: int) -> Interaction:
    """A later version written in ``batch``: resolved and rated, and any flaw corrected."""
    first = interaction(client, number)
    rng = random.Random(f"{client}:{number}:{batch}")  # noqa: S311
    return replace(
        first,
        customer_id=first.customer_id or f"C{rng.randrange(1, 400):04d}",
        handle_seconds=abs(first.handle_seconds) + rng.randrange(60, 600),
        status="RESOLVED",
        rating=rng.randrange(3, 6),
        updated_at=FIRST_DAY + timedelta(days=batch - 1, hours=7, minutes=11 * slot),
    )


def updated_numbers(client: str, batch: int) -> tuple[int, ...]:
    """Earlier interactions that get a new version in ``batch``: the previous batch's first
    flawed one (so a rejected key comes back corrected), then others chosen at random."""
    if batch < 2:
        return ()
    earlier = (batch - 1) * NEW_PER_BATCH
    previous = range(earlier - NEW_PER_BATCH + 1, earlier + 1)
    chosen = [next(n for n in previous if interaction(client, n).breaks)]
    rng = random.Random(f"{client}:updates:{batch}")  # noqa: S311
    while len(chosen) < UPDATES_PER_BATCH:
        number = rng.randrange(1, earlier + 1)
        if number not in chosen:
            chosen.append(number)
    return tuple(chosen)


def batch_versions(client: str, batch: int) -> tuple[Interaction, ...]:
    """Every version ``batch`` carries for ``client``: new interactions, then updates."""
    first = (batch - 1) * NEW_PER_BATCH + 1
    new = [interaction(client, number) for number in range(first, first + NEW_PER_BATCH)]
    later = [
        updated(client, number, batch, slot)
        for slot, number in enumerate(updated_numbers(client, batch))
    ]
    return (*new, *later)


def source_rows(client: str, batch: int) -> tuple[SourceRow, ...]:
    """The rows of the client's batch file, in file order, Beta's redeliveries included."""
    versions = batch_versions(client, batch)
    base = (batch - 1) * 1000
    if client == "alpha":
        return tuple(SourceRow(str(base + i + 1), v) for i, v in enumerate(versions))
    if client == "gamma":
        name = FILE_NAMES["gamma"].format(batch=batch)
        return tuple(SourceRow(f"{name}:{i + 1}", v) for i, v in enumerate(versions))
    rows: list[SourceRow] = []
    for index, version in enumerate(versions):
        copies = 2 if index % REDELIVER_EVERY == REDELIVER_EVERY - 1 else 1
        rows.extend(SourceRow(str(base + len(rows) + 1), version) for _ in range(copies))
    return tuple(rows)


def latest_batch(folder: Path) -> int:
    """The highest batch number written under ``folder`` (0 when none is)."""
    numbers = [
        int(found.group(1))
        for client in CLIENTS
        if (folder / client).is_dir()
        for path in (folder / client).iterdir()
        if (found := _BATCH_NUMBER.search(path.name))
    ]
    return max(numbers, default=0)


def write_next_batch(folder: Path) -> BatchReport:
    """Write the next batch of every client under ``folder``/<client>/."""
    batch = latest_batch(folder) + 1
    files, rows = [], {}
    for client in CLIENTS:
        path = folder / client / FILE_NAMES[client].format(batch=batch)
        path.parent.mkdir(parents=True, exist_ok=True)
        written = source_rows(client, batch)
        partial = path.with_name(f".{path.name}.partial")
        partial.write_bytes(_WRITERS[client](written))
        partial.replace(path)  # a reader never sees half a file
        files.append(path.relative_to(folder).as_posix())
        rows[client] = len(written)
    return BatchReport(batch, folder, tuple(files), rows)


def _text(value: datetime) -> str:
    return value.strftime(TIME_FORMAT)


def _alpha(rows: tuple[SourceRow, ...]) -> bytes:
    documents = []
    for row in rows:
        v = row.interaction
        document = {
            "seq": int(row.position),
            "_id": v.interaction_id,
            "customer": {"id": v.customer_id, "type": v.customer_type},
            "agent": v.agent_id,
            "area": v.support_area,
            "channel": v.channel,
            "opened_at": _text(v.opened_at),
            "handle_seconds": v.handle_seconds,
            "status": v.status,
            "first_contact": v.first_contact,
            "rating": v.rating,
            "updated_at": _text(v.updated_at),
        }
        documents.append(json.dumps(document, sort_keys=True) + "\n")
    return "".join(documents).encode()


BETA_COLUMNS = (
    "event_offset",
    "event_time",
    "interaction_ref",
    "customer_id",
    "customer_type",
    "agent_code",
    "support_area",
    "channel",
    "opened",
    "duration_s",
    "state",
    "fcr",
    "csat",
)
GAMMA_COLUMNS = (
    "interaction_id",
    "customer",
    "customer_kind",
    "agent",
    "area_code",
    "channel",
    "opened_at",
    "handle_time_seconds",
    "status",
    "resolved_first_contact",
    "rating",
    "last_modified",
)


def _csv(columns: tuple[str, ...], records: Sequence[tuple[object, ...]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(["" if value is None else value for value in record] for record in records)
    return buffer.getvalue()


def _beta(rows: tuple[SourceRow, ...]) -> bytes:
    records = [
        (
            row.position,
            _text(v.updated_at),
            v.interaction_id,
            v.customer_id,
            v.customer_type,
            v.agent_id,
            v.support_area,
            v.channel,
            _text(v.opened_at),
            v.handle_seconds,
            v.status,
            "Y" if v.first_contact else "N",
            v.rating,
        )
        for row in rows
        for v in (row.interaction,)
    ]
    return _csv(BETA_COLUMNS, records).encode()


def _gamma(rows: tuple[SourceRow, ...]) -> bytes:
    records = [
        (
            v.interaction_id,
            v.customer_id,
            v.customer_type,
            v.agent_id,
            v.support_area,
            v.channel,
            _text(v.opened_at),
            v.handle_seconds,
            v.status,
            1 if v.first_contact else 0,
            v.rating,
            _text(v.updated_at),
        )
        for row in rows
        for v in (row.interaction,)
    ]
    # mtime=0: the same batch compresses to the same bytes on every machine.
    return gzip.compress(_csv(GAMMA_COLUMNS, records).encode(), mtime=0)


_WRITERS = {"alpha": _alpha, "beta": _beta, "gamma": _gamma}
