"""The BUSINESS_RULES handler: rules of CFG_BUSINESS_RULES judged wave by wave into flags."""

from etl_craft.handlers.rules.handler import RulesResult, run_business_rules
from etl_craft.handlers.rules.judge import RuleCounts
from etl_craft.handlers.rules.model import RulesRun, RuleType
from etl_craft.handlers.rules.rejects import rejected_table

__all__ = [
    "RuleCounts",
    "RuleType",
    "RulesResult",
    "RulesRun",
    "rejected_table",
    "run_business_rules",
]
