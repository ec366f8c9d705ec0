"""What one SQL task attempt asks for, already read from the metadata and token-substituted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from etl_craft.core.errors import MetadataError
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject, is_identifier


class Action(StrEnum):
    CREATE_TABLE = "CREATE_TABLE"
    SETUP_TABLE = "SETUP_TABLE"
    OVERWRITE_TABLE = "OVERWRITE_TABLE"
    APPEND_TABLE = "APPEND_TABLE"
    SCD1_MERGE = "SCD1_MERGE"
    SCD2_MERGE = "SCD2_MERGE"
    DELETE_ROWS = "DELETE_ROWS"
    DROP_TABLE = "DROP_TABLE"

    @property
    def keyed(self) -> bool:
        return self in (Action.SCD1_MERGE, Action.SCD2_MERGE, Action.DELETE_ROWS)

    @property
    def creates(self) -> bool:
        return self in (Action.CREATE_TABLE, Action.SETUP_TABLE)


class RefreshType(StrEnum):
    FULL = "FULL"
    INCREMENTAL = "INCREMENTAL"


class DeleteMode(StrEnum):
    HARD = "HARD"
    SOFT = "SOFT"


class ValidFrom(StrEnum):
    """SCD2_VALID_FROM: the instant a version of SCD2_MERGE starts (and its predecessor ends)."""

    RUN_TIME = "RUN_TIME"  # the attempt's clock
    RUN_DATE = "RUN_DATE"  # midnight UTC of the pipeline run's date, so a backfill dates its day
    COLUMN = "COLUMN"  # the change's own time, from SCD2_VALID_FROM_COLUMN of the SELECT


class MissingKeys(StrEnum):
    """SCD2_MISSING_KEYS: what SCD2_MERGE does to a current key the SELECT no longer returns."""

    KEEP = "KEEP"  # nothing: the SELECT returns changes, not a full snapshot
    CLOSE = "CLOSE"  # close its current version
    NEW_RECORD = "NEW_RECORD"  # close it and open a deletion version, flagged DELETE_FLAG = 'Y'


class StaleRows(StrEnum):
    """SCD2_STALE_ROWS: what SCD2_MERGE by a COLUMN does with a time that doesn't move its key's
    history forward: a change at its current version's time, a time earlier than its history,
    a returning key earlier than its closing, a missing key that started after the batch."""

    IGNORE = "IGNORE"  # leave those keys as they are; a returning key reopens at the batch's time
    REFUSE = "REFUSE"  # refuse the whole merge, naming the keys


_ORDER_ITEM = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)(\s+(?:ASC|DESC))?(\s+NULLS\s+(?:FIRST|LAST))?\s*", re.IGNORECASE
)


@dataclass(frozen=True)
class DedupeOrder:
    """MERGE_DEDUPE_ORDER: the row of a key to keep: `col [ASC|DESC] [NULLS FIRST|LAST], ...`."""

    text: str

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(_ORDER_ITEM.fullmatch(item).group(1) for item in self._items())  # type: ignore[union-attr]

    @property
    def sql(self) -> str:
        return ", ".join(self._normal(item) for item in self._items())

    @staticmethod
    def _normal(item: str) -> str:
        column, *modifiers = item.split()
        return " ".join([column, *(word.upper() for word in modifiers)])

    def _items(self) -> list[str]:
        return [item for item in self.text.split(",") if item.strip()] if self.text.strip() else []

    def check(self) -> None:
        for item in self._items():
            if not _ORDER_ITEM.fullmatch(item):
                raise MetadataError(
                    f"MERGE_DEDUPE_ORDER {self.text!r} has the item {item.strip()!r}; expected "
                    "column [ASC|DESC] [NULLS FIRST|LAST], separated by commas, such as "
                    "updated_at DESC, load_id DESC"
                )


@dataclass(frozen=True)
class SqlActionSpec:
    action: Action
    target: TargetObject
    source_sql: str | None  # tokens already replaced; None only for DROP_TABLE
    pipeline_id: int
    pipeline_run_id: int
    task_run_id: int
    attempt_id: int
    actor: str
    run_date: date
    refresh_type: RefreshType = RefreshType.FULL
    merge_key: tuple[str, ...] = ()
    compare_columns: tuple[str, ...] = ()
    dedupe_order: DedupeOrder = DedupeOrder("")
    delete_mode: DeleteMode = DeleteMode.HARD
    schema_evolution: bool = False
    valid_from: ValidFrom = ValidFrom.RUN_TIME
    valid_from_column: str | None = None
    missing_keys: MissingKeys = MissingKeys.KEEP
    stale_rows: StaleRows = StaleRows.IGNORE
    # SCD2_MERGE closing missing keys: whether an empty SELECT may close every current key.
    allow_empty_snapshot: bool = False
    # CREATE_TABLE and SETUP_TABLE: add VALID_FROM/VALID_TO because an SCD2_MERGE writes the target.
    history_columns: bool = False
    ledger_schema: str = DEFAULT_LEDGER_SCHEMA

    def __post_init__(self) -> None:
        if self.action is not Action.DROP_TABLE and not (self.source_sql or "").strip():
            raise MetadataError(
                f"{self.action} into {self.target} has no SOURCE_SQL; set SOURCE_SQL or "
                "SOURCE_SQL_FILE to one SELECT"
            )
        if self.action.keyed and not self.merge_key:
            raise MetadataError(
                f"{self.action} into {self.target} has no MERGE_KEY; set it to the key "
                "column(s), separated by commas, such as customer_id"
            )
        for parameter, names in (
            ("MERGE_KEY", self.merge_key),
            ("MERGE_COMPARE_COLUMNS", self.compare_columns),
        ):
            bad = [name for name in names if not is_identifier(name)]
            if bad:
                raise MetadataError(
                    f"{parameter} names {bad[0]!r}, which is not a plain column name; expected "
                    "letters, digits and underscores, separated by commas"
                )
        self.dedupe_order.check()
        self._check_validity()

    def _check_validity(self) -> None:
        column = self.valid_from_column
        if self.valid_from is ValidFrom.COLUMN and not column:
            raise MetadataError(
                f"{self.action} into {self.target} takes SCD2_VALID_FROM from a COLUMN but has "
                "no SCD2_VALID_FROM_COLUMN; set it to the SELECT's timestamp column of each "
                "change, such as updated_at"
            )
        if column is not None and not is_identifier(column):
            raise MetadataError(
                f"SCD2_VALID_FROM_COLUMN names {column!r}, which is not a plain column name; "
                "expected one column of the SELECT, such as updated_at"
            )
