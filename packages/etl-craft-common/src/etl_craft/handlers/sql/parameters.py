"""The parameters the SQL handler reads: one declaration each, for validate, docs and forms."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from etl_craft.handlers.sql.spec import (
    Action,
    DeleteMode,
    MissingKeys,
    RefreshType,
    StaleRows,
    ValidFrom,
)


class ParameterType(StrEnum):
    TEXT = "TEXT"
    CHOICE = "CHOICE"
    FLAG = "FLAG"  # Y or N
    COLUMNS = "COLUMNS"  # comma-separated plain column names
    SQL = "SQL"
    PATH = "PATH"


@dataclass(frozen=True)
class ParameterDeclaration:
    name: str
    type: ParameterType
    required: bool
    default: str | None
    description: str
    choices: tuple[str, ...] = ()


SQL_PARAMETERS: tuple[ParameterDeclaration, ...] = (
    ParameterDeclaration(
        "ACTION",
        ParameterType.CHOICE,
        True,
        None,
        "How the SELECT's rows are applied to TARGET_OBJECT.",
        tuple(Action),
    ),
    ParameterDeclaration(
        "TARGET_OBJECT",
        ParameterType.TEXT,
        True,
        None,
        "The table written: schema.table or database.schema.table; a bare name is refused.",
    ),
    ParameterDeclaration(
        "SOURCE_SQL",
        ParameterType.SQL,
        False,
        None,
        "One read-only SELECT, inline. Exactly one of SOURCE_SQL and SOURCE_SQL_FILE "
        "(neither for DROP_TABLE).",
    ),
    ParameterDeclaration(
        "SOURCE_SQL_FILE",
        ParameterType.PATH,
        False,
        None,
        "A file under sql_files/ holding one read-only SELECT.",
    ),
    ParameterDeclaration(
        "REFRESH_TYPE",
        ParameterType.CHOICE,
        False,
        RefreshType.FULL.value,
        "FULL replaces $$pipeline_id_filter with 1 = 1; INCREMENTAL with pipeline_id = <id>.",
        tuple(RefreshType),
    ),
    ParameterDeclaration(
        "MERGE_KEY",
        ParameterType.COLUMNS,
        False,
        None,
        "Key columns of SCD1_MERGE, SCD2_MERGE and DELETE_ROWS; never NULL in the SELECT.",
    ),
    ParameterDeclaration(
        "MERGE_COMPARE_COLUMNS",
        ParameterType.COLUMNS,
        False,
        None,
        "Columns whose change makes a merge update a key (default: every non-key column); "
        "no floating-point columns.",
    ),
    ParameterDeclaration(
        "MERGE_DEDUPE_ORDER",
        ParameterType.TEXT,
        False,
        None,
        "Which row of a key a merge keeps: column [ASC|DESC] [NULLS FIRST|LAST], ...; "
        "ties between differing rows are refused.",
    ),
    ParameterDeclaration(
        "DELETE_MODE",
        ParameterType.CHOICE,
        False,
        DeleteMode.HARD.value,
        "DELETE_ROWS: HARD removes the rows, SOFT sets DELETE_FLAG = 'Y'.",
        tuple(DeleteMode),
    ),
    ParameterDeclaration(
        "SCD2_VALID_FROM",
        ParameterType.CHOICE,
        False,
        ValidFrom.RUN_TIME.value,
        "SCD2_MERGE: when a new version starts and the one it replaces ends: RUN_TIME (the "
        "attempt's clock), RUN_DATE (midnight UTC of the run date, for backfills) or COLUMN "
        "(SCD2_VALID_FROM_COLUMN of each row); a key's time never goes backwards.",
        tuple(ValidFrom),
    ),
    ParameterDeclaration(
        "SCD2_VALID_FROM_COLUMN",
        ParameterType.TEXT,
        False,
        None,
        "SCD2_MERGE with SCD2_VALID_FROM = COLUMN: the SELECT's timestamp column saying when "
        "each row's change happened (never NULL); it is left out of the default comparison.",
    ),
    ParameterDeclaration(
        "SCD2_MISSING_KEYS",
        ParameterType.CHOICE,
        False,
        MissingKeys.KEEP.value,
        "SCD2_MERGE of a full snapshot: what happens to a current key the SELECT doesn't "
        "return: KEEP leaves it, CLOSE closes its version, NEW_RECORD closes it and opens a "
        "deletion version with DELETE_FLAG = 'Y'.",
        tuple(MissingKeys),
    ),
    ParameterDeclaration(
        "SCD2_STALE_ROWS",
        ParameterType.CHOICE,
        False,
        StaleRows.IGNORE.value,
        "SCD2_MERGE with SCD2_VALID_FROM = COLUMN: a key whose time doesn't move its history "
        "forward (a change at its current version's time, an earlier time, a missing key that "
        "started after the batch's latest time): IGNORE leaves it as it is and counts it, "
        "reopening a returning key at the batch's latest time; REFUSE refuses the merge.",
        tuple(StaleRows),
    ),
    ParameterDeclaration(
        "ALLOW_EMPTY_SNAPSHOT",
        ParameterType.FLAG,
        False,
        "N",
        "SCD2_MERGE with SCD2_MISSING_KEYS = CLOSE or NEW_RECORD: Y lets a SELECT that returns "
        "no rows close every current key; N refuses it.",
    ),
    ParameterDeclaration(
        "SCHEMA_EVOLUTION",
        ParameterType.FLAG,
        False,
        "N",
        "Y adds the SELECT's new columns with ALTER TABLE ADD COLUMN (full types) and refuses "
        "changed types; N refuses new columns.",
    ),
    ParameterDeclaration(
        "PIPELINE_ID_SUBSTITUTION",
        ParameterType.FLAG,
        False,
        "N",
        "Y replaces $$pipeline_id, $$pipeline_run_id, $$task_run_id and $$run_date outside "
        "literals and comments.",
    ),
    ParameterDeclaration(
        "PIPELINE_ID_FILTER",
        ParameterType.FLAG,
        False,
        "N",
        "Y replaces $$pipeline_id_filter (see REFRESH_TYPE).",
    ),
)
