"""Runs and their tasks: read, explain; cancel, reopen, mark, rerun and skip (operator)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from etl_craft.operations.explain.past import parse_moment
from etl_craft.operations.explain.task import explain_task
from etl_craft.operations.interventions.actions import MarkRequest, cancel, mark, reopen
from etl_craft.operations.runs.history import pipeline_of_run, run_by_id, run_tasks
from etl_craft.operations.runs.reruns import RerunRequest, queue_rerun, skip
from etl_craft_api.auth import Operator, Viewer
from etl_craft_api.bodies import Rerun, RunMark, TaskMark, Why
from etl_craft_api.documents import document
from etl_craft_api.routes.params import At, Id, TaskCode
from etl_craft_api.routing import StrictRoute

router = APIRouter(prefix="/runs", tags=["runs"], route_class=StrictRoute)


@router.get("/{run_id}", summary="a run and its tasks (etl-craft status)")
def get_run(run_id: Id, ctx: Viewer) -> JSONResponse:
    return document(ctx, run_by_id(ctx, run_id))


@router.get("/{run_id}/tasks", summary="a run's tasks, each with its task run")
def get_tasks(run_id: Id, ctx: Viewer) -> JSONResponse:
    return document(ctx, run_tasks(ctx, run_id))


@router.get(
    "/{run_id}/tasks/{task}/explain",
    summary="why a task is (or was, at a past moment) in its state and what would make it run "
    "(etl-craft explain)",
)
def get_explain(run_id: Id, task: TaskCode, ctx: Viewer, at: At = None) -> JSONResponse:
    moment = None if at is None else parse_moment(at)
    return document(ctx, explain_task(ctx, pipeline_of_run(ctx, run_id), task, run_id, moment))


@router.post(
    "/{run_id}/cancel",
    summary="cancel a run: queued tasks at once, running ones by their owner",
)
def post_cancel(run_id: Id, body: Why, ctx: Operator) -> JSONResponse:
    return document(ctx, cancel(ctx, pipeline_of_run(ctx, run_id), run_id, body.reason))


@router.post("/{run_id}/reopen", summary="reopen an ended run so etl-craft server continues it")
def post_reopen(run_id: Id, body: Why, ctx: Operator) -> JSONResponse:
    return document(ctx, reopen(ctx, pipeline_of_run(ctx, run_id), run_id, body.reason))


@router.post("/{run_id}/mark", summary="set an ended run's status, with a reason")
def post_run_mark(run_id: Id, body: RunMark, ctx: Operator) -> JSONResponse:
    request = MarkRequest(pipeline_of_run(ctx, run_id), body.status, body.reason, run_id)
    return document(ctx, mark(ctx, request))


@router.post("/{run_id}/tasks/{task}/mark", summary="set a task's status, with a reason")
def post_task_mark(run_id: Id, task: TaskCode, body: TaskMark, ctx: Operator) -> JSONResponse:
    pipeline = pipeline_of_run(ctx, run_id)
    request = MarkRequest(pipeline, body.status, body.reason, run_id, task, body.rows)
    return document(ctx, mark(ctx, request))


@router.post(
    "/{run_id}/tasks/{task}/rerun",
    status_code=202,
    summary="queue the task's next attempt (and, with downstream, its downstream task runs "
    "after it); etl-craft server runs them",
)
def post_rerun(run_id: Id, task: TaskCode, body: Rerun, ctx: Operator) -> JSONResponse:
    pipeline = pipeline_of_run(ctx, run_id)
    request = RerunRequest(pipeline, task, body.reason, run_id, body.with_downstream)
    return document(ctx, queue_rerun(ctx, request), status=202)


@router.post("/{run_id}/tasks/{task}/skip", summary="record a task that has not run as SKIPPED")
def post_skip(run_id: Id, task: TaskCode, body: Why, ctx: Operator) -> JSONResponse:
    return document(ctx, skip(ctx, pipeline_of_run(ctx, run_id), task, run_id, body.reason))
