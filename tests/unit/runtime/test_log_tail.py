"""TASK_LOG's tail: at most Logs.tail_bytes of the log's end, starting at a line."""

from __future__ import annotations

from pathlib import Path

from etl_craft.runtime.logfile import tail


def test_a_short_log_is_kept_whole(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("one\ntwo\n")
    assert tail(log, 1024) == "one\ntwo\n"


def test_a_long_log_keeps_whole_lines_within_the_limit(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_text("".join(f"line {n:04d}\n" for n in range(1000)))
    kept = tail(log, 100)
    assert kept is not None
    assert len(kept.encode()) <= 100
    assert kept.startswith("line ")
    assert kept.endswith("line 0999\n")
    assert kept.count("\n") == len(kept) // len("line 0000\n")


def test_a_character_cut_by_the_limit_is_dropped_not_garbled(tmp_path: Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(("é" * 100).encode())  # no line break: the cut is inside a character
    kept = tail(log, 51)
    assert kept is not None
    assert set(kept) == {"é"}
    assert len(kept.encode()) <= 51


def test_no_log_no_tail(tmp_path: Path) -> None:
    assert tail(tmp_path / "missing.log", 100) is None
