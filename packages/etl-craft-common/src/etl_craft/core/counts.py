"""Row counts an attempt reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Counts:
    source: int | None = None
    target: int | None = None
    inserted: int | None = None
    updated: int | None = None
    deleted: int | None = None
    duplicates: int | None = None
    rows_written: int | None = None

    def as_params(self) -> dict[str, int | None]:
        """The counts as the Engine DB's *_COUNT parameters."""
        values = asdict(self)
        return {
            "source_count": values["source"],
            "target_count": values["target"],
            "insert_count": values["inserted"],
            "update_count": values["updated"],
            "delete_count": values["deleted"],
            "duplicate_count": values["duplicates"],
            "rows_written": values["rows_written"],
        }
