"""The demo's synthetic sources: each call writes the next batch, the same on every machine."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

from etl_craft.operations.demo.sources import (
    CLIENTS,
    NEW_PER_BATCH,
    UPDATES_PER_BATCH,
    batch_versions,
    interaction,
    source_rows,
    updated_numbers,
    write_next_batch,
)


def test_each_call_writes_the_next_batch_of_every_client(tmp_path: Path) -> None:
    first, second = write_next_batch(tmp_path), write_next_batch(tmp_path)

    assert (first.batch, second.batch) == (1, 2)
    assert second.files == (
        "alpha/interactions_000002.jsonl",
        "beta/events_000002.csv",
        "gamma/0000000002_support_interactions.csv.gz",
    )
    assert second.rows == {client: len(source_rows(client, 2)) for client in CLIENTS}
    documents = (tmp_path / second.files[0]).read_text().splitlines()
    assert [json.loads(line)["seq"] for line in documents][:2] == [1001, 1002]
    with gzip.open(tmp_path / second.files[2], "rt") as handle:
        objects = list(csv.DictReader(handle))
    assert [row["interaction_id"] for row in objects[:1]] == ["GAMMA-000031"]


def test_a_batch_is_the_same_bytes_wherever_it_is_written(tmp_path: Path) -> None:
    for folder in (tmp_path / "a", tmp_path / "b"):
        write_next_batch(folder)
    for name in write_next_batch(tmp_path / "c").files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "c" / name).read_bytes()


def test_a_batch_holds_new_interactions_updates_and_a_few_rule_breakers() -> None:
    versions = batch_versions("alpha", 2)
    assert len(versions) == NEW_PER_BATCH + UPDATES_PER_BATCH
    assert [v.number for v in versions[:NEW_PER_BATCH]] == list(range(31, 61))
    broken = {v.number: v.breaks for v in versions if v.breaks}
    assert broken == {
        33: "negative_handle_time",
        37: "missing_customer",
        47: "rating_out_of_range",
        53: "negative_handle_time",
        57: "missing_customer",
    }
    corrected = updated_numbers("alpha", 2)[0]
    assert interaction("alpha", corrected).breaks is not None
    later = versions[NEW_PER_BATCH]
    assert (later.number, later.breaks, later.status) == (corrected, None, "RESOLVED")
    assert later.updated_at > max(v.updated_at for v in batch_versions("alpha", 1))


def test_beta_redelivers_every_tenth_event() -> None:
    rows = source_rows("beta", 1)
    assert len(rows) == NEW_PER_BATCH + NEW_PER_BATCH // 10
    assert rows[9].interaction == rows[10].interaction
    assert rows[9].position != rows[10].position
