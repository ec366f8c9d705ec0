"""Judge one rule: open new flags, re-see standing ones, clear those that pass or lost their row."""

from __future__ import annotations

from dataclasses import dataclass

from etl_craft.core.errors import MetadataError, TaskError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.rule_flags import (
    CHUNK,
    ClearReason,
    chunks,
    clear_flags,
    open_flags,
    see_flags,
    standing_keys,
)
from etl_craft.handlers.rules.model import Rule, RulesRun, RuleType, decode_key, encode_key
from etl_craft.warehouse.connection import WarehouseConnection
from etl_craft.warehouse.rule_sql import (
    Scope,
    broken_keys,
    judge_current_versions,
    present_keys,
)


@dataclass(frozen=True)
class RuleCounts:
    rule_code: str
    rule_type: RuleType
    wave: int
    broken: int  # judged keys that break the rule now
    opened: int
    still_standing: int
    cleared_passed: int
    cleared_deleted: int

    def describe(self) -> str:
        return (
            f"rule {self.rule_code} ({self.rule_type}, wave {self.wave}): {self.broken} key(s) "
            f"break it, {self.opened} flag(s) opened, {self.still_standing} still standing, "
            f"{self.cleared_passed} cleared as passed, {self.cleared_deleted} cleared as deleted"
        )


def judge_rule(
    engine: EngineConnection, warehouse: WarehouseConnection, rule: Rule, run: RulesRun
) -> RuleCounts:
    scope = _scope(warehouse, rule, run)
    broken = _broken(warehouse, rule, scope)
    standing = standing_keys(engine, rule.id)
    present = _present(warehouse, rule, scope, standing)
    passed = {key for key in standing - broken if present.get(key)}
    deleted = {key for key in standing if key not in present}
    task_run = run.task_run_id
    return RuleCounts(
        rule_code=rule.code,
        rule_type=rule.type,
        wave=rule.row.wave,
        broken=len(broken),
        opened=open_flags(engine, rule.row, sorted(broken - standing), task_run),
        still_standing=see_flags(engine, rule.id, broken & standing, task_run),
        cleared_passed=clear_flags(engine, rule.id, passed, task_run, ClearReason.PASSED),
        cleared_deleted=clear_flags(engine, rule.id, deleted, task_run, ClearReason.KEY_DELETED),
    )


def _scope(warehouse: WarehouseConnection, rule: Rule, run: RulesRun) -> Scope:
    columns = frozenset(column.key for column in warehouse.columns(rule.target))
    if not columns:
        raise MetadataError(
            f"business rule {rule.code} judges {rule.target}, which does not exist in the "
            "warehouse; create it first (a SETUP_TABLE task earlier in the pipeline) or correct "
            "TARGET_TABLE"
        )
    missing = [key for key in rule.keys if key.lower() not in columns]
    if missing:
        raise MetadataError(
            f"business rule {rule.code} has KEY_COLUMNS {', '.join(rule.keys)}, but "
            f"{rule.target} has no column {missing[0]}; name the target's key columns"
        )
    return Scope(rule.target, rule.keys, columns, None if run.forced else run.pipeline_run_id)


def _broken(warehouse: WarehouseConnection, rule: Rule, scope: Scope) -> set[str]:
    select = judge_current_versions(rule.select, scope, warehouse.dialect.sqlglot_name)
    purpose = f"find the keys breaking rule {rule.code}"
    rows = warehouse.fetch_all(purpose, broken_keys(select, scope))
    nulls = sum(1 for row in rows if any(value is None for value in row))
    if nulls:
        raise TaskError(
            f"business rule {rule.code} returns {nulls} key(s) with a NULL in "
            f"{', '.join(rule.keys)}; a flag needs the whole key: filter NULL keys out of RULE_SQL"
        )
    return {encode_key(tuple(str(value) for value in row)) for row in rows}


def _present(
    warehouse: WarehouseConnection, rule: Rule, scope: Scope, keys: set[str]
) -> dict[str, bool]:
    """Standing keys that still have a live row, each True when that row is judged in this run."""
    present: dict[str, bool] = {}
    placeholder = warehouse.dialect.placeholder
    for chunk in chunks(sorted(keys), CHUNK):
        params = [value for key in chunk for value in decode_key(key)]
        sql = present_keys(scope, len(chunk), placeholder)
        rows = warehouse.fetch_all(f"check flagged keys of rule {rule.code}", sql, params)
        for row in rows:
            present[encode_key(tuple(str(value) for value in row[:-1]))] = bool(row[-1])
    return present
