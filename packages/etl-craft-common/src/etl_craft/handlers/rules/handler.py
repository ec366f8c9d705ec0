"""The BUSINESS_RULES handler: every active rule of a task, wave by wave.

Flags are written in the Engine DB transaction the caller supplies, so a failing rule rolls
back every flag of the attempt, earlier waves included.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import groupby

from etl_craft.core.counts import Counts
from etl_craft.core.errors import IncompleteError, MetadataError, TaskError, WarehouseError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.rule_flags import active_rules
from etl_craft.handlers.rules.judge import RuleCounts, judge_rule
from etl_craft.handlers.rules.model import Rule, RulesRun, RuleType, prepare
from etl_craft.handlers.rules.rejects import refresh_rejected
from etl_craft.warehouse.connection import WarehouseConnection

log = logging.getLogger("etl_craft.handlers.rules")


@dataclass(frozen=True)
class RulesResult:
    rules: tuple[RuleCounts, ...]
    rejected_tables: tuple[str, ...]

    @property
    def counts(self) -> Counts:
        return Counts(
            source=sum(rule.broken for rule in self.rules),
            inserted=sum(rule.opened for rule in self.rules),
            updated=sum(rule.still_standing for rule in self.rules),
            deleted=sum(rule.cleared_passed + rule.cleared_deleted for rule in self.rules),
        )

    @property
    def task_log(self) -> str:
        return "\n".join(rule.describe() for rule in self.rules)

    def incomplete(self) -> IncompleteError | None:
        """The error the attempt ends with while an INCOMPLETE rule still flags keys."""
        held = [r for r in self.rules if r.rule_type is RuleType.INCOMPLETE and r.broken]
        if not held:
            return None
        listed = ", ".join(f"{rule.rule_code} ({rule.broken} key(s))" for rule in held)
        return IncompleteError(
            f"INCOMPLETE business rules still flag keys: {listed}; the flags are recorded in "
            "AUD_BUSINESS_RULE_FLAGS: fix the data and rerun the task"
        )


def run_business_rules(
    engine: EngineConnection, warehouse: WarehouseConnection, run: RulesRun
) -> RulesResult:
    rules = [
        prepare(row, run, warehouse.dialect.sqlglot_name)
        for row in active_rules(engine, run.task_id)
    ]
    if not rules:
        raise TaskError(
            f"BUSINESS_RULES task {run.task_code} has no active rule in CFG_BUSINESS_RULES; "
            "add rules for it or deactivate the task"
        )
    judged: list[RuleCounts] = []
    # Rules come in wave order: a wave starts once every rule of the one before is judged.
    for wave, members in groupby(rules, key=lambda rule: rule.row.wave):
        wave_rules = list(members)
        log.info("wave %s of task %s: %d rule(s)", wave, run.task_code, len(wave_rules))
        judged.extend(_judge(engine, warehouse, rule, run) for rule in wave_rules)
    rejected = _refresh(engine, warehouse, rules, run)
    return RulesResult(tuple(judged), rejected)


def _judge(
    engine: EngineConnection, warehouse: WarehouseConnection, rule: Rule, run: RulesRun
) -> RuleCounts:
    try:
        counts = judge_rule(engine, warehouse, rule, run)
    except (MetadataError, TaskError):
        raise
    except WarehouseError as error:
        raise TaskError(
            f"business rule {rule.code} (wave {rule.row.wave}) on {rule.target} failed: "
            f"{str(error).strip()}; fix its RULE_SQL. No flag of this attempt is kept"
        ) from error
    log.info("%s", counts.describe())
    return counts


def _refresh(
    engine: EngineConnection, warehouse: WarehouseConnection, rules: list[Rule], run: RulesRun
) -> tuple[str, ...]:
    tables = []
    targets = {rule.row.target_table: rule for rule in rules if rule.type is RuleType.REJECT}
    for rule in targets.values():
        table, count = refresh_rejected(engine, warehouse, rule, run.ledger_schema)
        log.info("%s holds %d rejected key(s) of %s", table, count, rule.target)
        tables.append(table)
    return tuple(tables)
