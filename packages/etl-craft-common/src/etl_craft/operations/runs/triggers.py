"""Triggering a run for etl-craft server: found or created QUEUED, never supervised here.

The run is chosen as `etl-craft run` chooses it (the run with the key, else the pipeline's
single live run, else a new one), and the request is recorded in AUD_ACTIONS; the overseer
admits and drives it, so the caller gets its answer at once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date

from etl_craft.core.errors import RunStateError
from etl_craft.operations.context import OperationContext
from etl_craft.operations.interventions.actions import Acting, perform, view_of
from etl_craft.operations.runs.foreground import RunRequest, find_or_create_run
from etl_craft.operations.runs.views import RunView


@dataclass(frozen=True)
class TriggerRequest:
    pipeline_code: str
    run_date: date | None = None
    run_key: str | None = None
    reason: str | None = None


def trigger_run(ctx: OperationContext, request: TriggerRequest) -> RunView:
    def body(acting: Acting) -> int:
        run = find_or_create_run(
            acting.conn,
            ctx,
            RunRequest(request.pipeline_code, run_key=request.run_key, run_date=request.run_date),
        )
        acting.scope = replace(
            acting.scope, pipeline_id=run.pipeline_id, run_id=run.pipeline_run_id
        )
        if run.status.terminal:
            raise RunStateError(
                f"run {run.pipeline_run_id} of {run.pipeline_code} with key {run.run_key!r} has "
                f"ended {run.status}; reopen it to run it again, or trigger with another key"
            )
        return run.pipeline_run_id

    arguments: dict[str, object] = {
        "pipeline_code": request.pipeline_code,
        "run_key": request.run_key,
        "run_date": request.run_date,
        "queued": True,
        "reason": request.reason,
    }
    run_id, _ = perform(ctx, "run", arguments, body)
    return view_of(ctx, run_id)
