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
    # Merges: the kept rows' keys, by what the merge found for them (None for other actions).
    new_keys: int | None = None
    changed_keys: int | None = None
    unchanged_keys: int | None = None
    # SCD2_MERGE: keys whose time didn't move their history forward (SCD2_STALE_ROWS).
    stale_keys: int | None = None
    same_time_keys: int | None = None
    reopened_keys: int | None = None

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
            "new_key_count": values["new_keys"],
            "changed_key_count": values["changed_keys"],
            "unchanged_key_count": values["unchanged_keys"],
            "stale_key_count": values["stale_keys"],
            "same_time_key_count": values["same_time_keys"],
            "reopened_key_count": values["reopened_keys"],
        }
