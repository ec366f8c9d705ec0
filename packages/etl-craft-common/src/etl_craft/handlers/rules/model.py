"""A business rule as the handler judges it: checked names, parsed SQL, keys as text."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.rule_flags import RuleRow
from etl_craft.warehouse.parsing import parse_select
from etl_craft.warehouse.substitution import TokenValues, substitute
from etl_craft.warehouse.targets import TargetObject, is_identifier

KeyText = tuple[str, ...]


class RuleType(StrEnum):
    INCOMPLETE = "INCOMPLETE"  # hold the data back: the task ends INCOMPLETE while any stands
    REJECT = "REJECT"  # exclude the keys downstream (see rejects.py)
    REPORT = "REPORT"  # inform only


@dataclass(frozen=True)
class RulesRun:
    """One attempt of a BUSINESS_RULES task."""

    task_id: int
    task_code: str
    pipeline_id: int
    pipeline_run_id: int
    task_run_id: int
    run_date: date
    # A forced run judges the whole table; a normal one only the keys of this run's rows.
    forced: bool
    ledger_schema: str = "etl_craft"


@dataclass(frozen=True)
class Rule:
    row: RuleRow
    type: RuleType
    target: TargetObject
    keys: tuple[str, ...]
    select: str  # the rule's SELECT with tokens replaced and its terminator removed

    @property
    def id(self) -> int:
        return self.row.business_rule_id

    @property
    def code(self) -> str:
        return self.row.rule_code


def prepare(row: RuleRow, run: RulesRun, warehouse_dialect: str) -> Rule:
    keys = tuple(part.strip() for part in row.key_columns.split(","))
    bad = [key for key in keys if not is_identifier(key)]
    if bad:
        raise MetadataError(
            f"business rule {row.rule_code} has KEY_COLUMNS {row.key_columns!r} with "
            f"{bad[0]!r}, which is not a plain column name; expected names such as "
            "order_id, line_no"
        )
    tokens = TokenValues(
        run.pipeline_id, run.pipeline_run_id, run.task_run_id, run.run_date, run.forced
    )
    subject = f"RULE_SQL of business rule {row.rule_code}"
    parsed = parse_select(substitute(row.rule_sql, tokens), warehouse_dialect, subject=subject)
    return Rule(
        row, RuleType(row.rule_type), TargetObject.parse(row.target_table), keys, parsed.sql
    )


def encode_key(values: KeyText) -> str:
    """KEY_VALUE: the key as a JSON array of its column values, each as the warehouse's text."""
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def decode_key(text: str) -> KeyText:
    return tuple(str(value) for value in json.loads(text))
