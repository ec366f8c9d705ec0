"""The metadata editor: forms that become the project's next migration file, never row edits.

Each save goes form -> preview (the file's name and SQL, the CFG_ rows before and after,
validate on the pipelines it changes) -> confirm, which writes the file and applies it with
migrate as the signed-in token. For a pipeline that a spec file defines, the preview adds the
spec's diff, the file is the migration plan would write, and confirm writes the spec too.
Changing metadata needs the admin role: the API gives operators run controls only, and the
roles' own split (a developer role for metadata, S7.B) does not exist yet, so the highest role
guards it until it does.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from etl_craft.core.enums import EditKind
from etl_craft.operations.inspect import list_pipelines
from etl_craft.operations.metadata.edit_kinds import SPECS, FieldValue, spec_of
from etl_craft.operations.metadata.editor import (
    apply_metadata_edit,
    defining_spec_file,
    preview_metadata_edit,
)
from etl_craft.operations.metadata.objects import pipeline_metadata
from etl_craft_ui.forms import Form
from etl_craft_ui.metadata_forms import MODES, diff_rows, edits_of, kind_of
from etl_craft_ui.rendering import render
from etl_craft_ui.sessions import Developer, SignedIn, Viewer

router = APIRouter(tags=["metadata"])
REFUSED = 409  # as the API answers a MetadataError
# What a preview's confirm form carries on to the apply: the submitted form, nothing else.
CARRIED = ("kind", "mode", "parameters", "upstream")


def edit_href(kind: EditKind, mode: str, key: Mapping[str, str]) -> str:
    query = {"kind": kind.value, "mode": mode, **{f"key_{n}": v for n, v in key.items()}}
    return f"/metadata/edit?{urlencode(query)}"


@router.get("/metadata")
def metadata_home(request: Request, session: SignedIn, ctx: Viewer) -> HTMLResponse:
    return render(
        request,
        "metadata_index.html",
        session,
        pipelines=list_pipelines(ctx),
        new_pipeline=edit_href(EditKind.PIPELINE, "add", {}),
    )


@router.get("/metadata/pipelines/{pipeline_code}")
def metadata_pipeline(
    request: Request, pipeline_code: str, session: SignedIn, ctx: Viewer
) -> HTMLResponse:
    return render(
        request,
        "metadata_pipeline.html",
        session,
        metadata=pipeline_metadata(ctx, pipeline_code),
        specs=[spec for spec in SPECS if spec.kind is not EditKind.PIPELINE],
        pipeline_spec=spec_of(EditKind.PIPELINE),
        edit_href=edit_href,
        spec_file=defining_spec_file(ctx, pipeline_code),
    )


@router.get("/metadata/edit")
def metadata_form(request: Request, session: SignedIn, ctx: Developer) -> HTMLResponse:
    query = request.query_params
    kind = kind_of(query.get("kind"))
    spec = spec_of(kind)
    mode = query.get("mode", "add") if query.get("mode") in MODES else "add"
    key = {name: query.get(f"key_{name}", "") for name in spec.key_names}
    values: Mapping[str, FieldValue] = {}
    if mode != "add":
        found = pipeline_metadata(ctx, key["pipeline"]).find(kind, key)
        values = {} if found is None else found.fields
    return render(
        request,
        "metadata_edit.html",
        session,
        spec=spec,
        mode=mode,
        key=key,
        values=values,
        spec_file=defining_spec_file(ctx, key["pipeline"]) if key.get("pipeline") else None,
    )


@router.post("/metadata/preview")
def metadata_preview(
    request: Request, session: SignedIn, ctx: Developer, form: Form
) -> HTMLResponse:
    preview = preview_metadata_edit(ctx, edits_of(ctx, form))
    return render(
        request,
        "metadata_preview.html",
        session,
        status_code=REFUSED if preview.refused else 200,
        preview=preview,
        diff=diff_rows(preview.changes),
        carried=_carried(form),
    )


@router.post("/metadata/apply")
def metadata_apply(request: Request, session: SignedIn, ctx: Developer, form: Form) -> HTMLResponse:
    edits = edits_of(ctx, form)
    applied = apply_metadata_edit(
        ctx, edits, form.get("expected_file_name", ""), form.get("expected_spec_digest", "")
    )
    return render(
        request,
        "metadata_applied.html",
        session,
        applied=applied,
        diff=diff_rows(applied.changes),
        pipeline_code=edits[0].key["pipeline"],
    )


def _carried(form: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in form.items()
        if name in CARRIED or name.startswith(("key_", "field_"))
    }
