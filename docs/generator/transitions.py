"""The state machine reference: every allowed status change, from the transition table."""

from __future__ import annotations

import re
from collections.abc import Iterable

from docs.generator.markdown import code, header, page, table

from etl_craft.core.enums import AttemptStatus, RunStatus, TaskRunStatus
from etl_craft.enginedb.transitions.table import TRANSITIONS, Entity

SOURCE = "etl_craft.enginedb.transitions.table"
INTRO = (
    "Every status change of a run, a task run or an attempt is one of these transitions: one "
    "guarded `UPDATE ... WHERE id = :id AND STATUS = :expected` (or an `INSERT`) whose row "
    "count is checked. A change whose guard no longer holds, because another process got "
    "there first, is refused with exit code 20 (`STALE_TRANSITION`) and changes nothing. "
    "Owner-fenced transitions also require `OWNER_ID` to be the caller's. The concepts are "
    "explained in [Runs, attempts and the state machine](../concepts/runs.md)."
)
# The defect ids some rows name belong to the project's plan, not to a reader of the docs.
_DEFECT = re.compile(r"\s*\(B\d+\)")
ENTITIES = (
    (Entity.RUN, "Pipeline runs", "AUD_PIPELINES_RUN_LOG.STATUS", tuple(RunStatus)),
    (Entity.TASK_RUN, "Task runs", "AUD_TASK_RUN_LOG.STATUS", tuple(TaskRunStatus)),
    (Entity.ATTEMPT, "Attempts", "AUD_TASK_ATTEMPTS.STATUS", tuple(AttemptStatus)),
)


def render() -> str:
    lines = header("Status transitions", SOURCE, INTRO)
    for entity, title, column, statuses in ENTITIES:
        order = [str(status) for status in statuses]
        lines += [f"## {title}", "", f"`{column}`: {', '.join(code(s) for s in order)}.", ""]
        rows = (
            (
                code(t.name),
                _statuses(t.sources, order) or "(new row)",
                _statuses(t.targets, order),
                t.who,
                t.guard + ("; owner-fenced" if t.owner_fenced else ""),
                _DEFECT.sub("", t.prevents),
            )
            for t in TRANSITIONS
            if t.entity is entity
        )
        lines += table(("transition", "from", "to", "by", "guard", "prevents"), rows)
    return page(lines)


def _statuses(statuses: Iterable[str], order: list[str]) -> str:
    return ", ".join(code(s) for s in sorted(statuses, key=order.index))
