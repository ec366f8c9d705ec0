"""The public scripting API: what an ingestion script receives, and what it returns.

A script under ingestion_scripts/ defines::

    from etl_craft.scripting import ScriptContext, ScriptResult

    def run(context: ScriptContext) -> ScriptResult:
        since = context.offset  # None on the first run
        ...
        return ScriptResult(row_count=loaded, offset=newest)

Rows a script lands go through ``context.fenced_transaction()``: delete this task run's rows,
insert the batch, and the block commits only while no later attempt of the task run has
published. Writes outside it are at-least-once.

The offset is stored if and only if the attempt is recorded SUCCESS, in the same Engine DB
transaction; a script that raises leaves the previous offset in place. Timestamp offsets must be
timezone-aware with whole microseconds. Scripts load as modules named etl_craft_script_<path>,
so pickles and ProcessPoolExecutor with the fork start method work; the spawn start method can't
re-import a script by that name.
"""

from etl_craft.enginedb.offsets import OffsetType
from etl_craft.handlers.scripts.contract import ScriptContext, ScriptResult

__all__ = ["OffsetType", "ScriptContext", "ScriptResult"]
