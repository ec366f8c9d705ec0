"""The UI's pages: each module is an APIRouter, listed in ROUTERS for the app to include."""

from __future__ import annotations

from fastapi import APIRouter

from etl_craft_ui.pages import (
    alerts,
    attempts,
    backfills,
    events,
    health,
    interventions,
    metadata,
    oidc_sign_in,
    pipelines,
    projects,
    run_actions,
    runs,
    sign_in,
    workers,
)

ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    sign_in.router,
    oidc_sign_in.router,
    projects.router,
    pipelines.router,
    interventions.router,
    workers.router,
    alerts.router,
    metadata.router,
    runs.router,
    run_actions.router,
    attempts.router,
    backfills.router,
    events.router,
)
