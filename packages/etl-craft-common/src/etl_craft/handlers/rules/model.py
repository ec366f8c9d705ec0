"""A business rule as the handler judges it: checked names, parsed SQL, keys as text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

from etl_craft.core.errors import MetadataError
from etl_craft.enginedb.rule_flags import RuleRow
from etl_craft.handlers.sql.tokens import read_parameters
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
    pipeline_code: str | None = None
    run_key: str | None = None
    # The pipeline's parameters and their PARAMETER_TYPE, for `$$param.NAME` in RULE_SQL.
    pipeline_parameters: Mapping[str, str | None] = field(default_factory=dict)
    pipeline_parameter_types: Mapping[str, str] = field(default_factory=dict)


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
    subject = f"RULE_SQL of business rule {row.rule_code}"
    parameters = read_parameters(
        row.rule_sql,
        run.pipeline_code or f"id {run.pipeline_id}",
        run.pipeline_parameters,
        run.pipeline_parameter_types,
        subject,
    )
    tokens = TokenValues(
        run.pipeline_id,
        run.pipeline_run_id,
        run.task_run_id,
        run.run_date,
        run.forced,
        pipeline_code=run.pipeline_code,
        run_key=run.run_key,
        parameters=parameters,
    )
    replaced = substitute(row.rule_sql, tokens.as_sql(warehouse_dialect))
    parsed = parse_select(replaced, warehouse_dialect, subject=subject)
    return Rule(
        row, RuleType(row.rule_type), TargetObject.parse(row.target_table), keys, parsed.sql
    )


def encode_key(values: KeyText) -> str:
    """KEY_VALUE: the key as a JSON array of its column values, each as the warehouse's text."""
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def decode_key(text: str) -> KeyText:
    return tuple(str(value) for value in json.loads(text))
