"""Attempt log files."""

from __future__ import annotations

from pathlib import Path

TAIL_CHARACTERS = 4000


def tail(path: Path, characters: int = TAIL_CHARACTERS) -> str | None:
    """The last ``characters`` of the log, cut at a line start; None when there is no log."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - characters * 4))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    if len(text) <= characters:
        return text
    cut = text[-characters:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut


def attempt_log_path(logs_dir: Path, pipeline: str, run_id: int, task: str, attempt: int) -> Path:
    return logs_dir / pipeline / f"run-{run_id}" / f"{task}.attempt-{attempt}.log"
