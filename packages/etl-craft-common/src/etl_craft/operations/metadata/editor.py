"""The metadata editor's preview and apply, for any pipeline.

A pipeline that a spec file defines is edited in its spec: rows changed alone would be put
back by the next ``plan --write``. Its preview shows the spec's diff beside the migration plan
would write for the edited spec, and applying writes both and applies the migration. When the
editor can't write the project's files, or the spec can't take the edit in place, the preview
refuses and names the file to edit instead. Any other pipeline's edit is a migration file alone.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from etl_craft.config.project import Project
from etl_craft.operations.context import OperationContext
from etl_craft.operations.metadata.edits import (
    AppliedEdit,
    EditPreview,
    Edits,
    MetadataEdit,
    MigrationConflictError,
    apply_edit,
    apply_previewed,
    confirm,
    edit_batch,
    preview_edit,
    written_aside,
)
from etl_craft.operations.metadata.spec_change import SpecChange
from etl_craft.operations.metadata.spec_edits import (
    NotInPlace,
    edited_text,
    load_edited,
    spec_diff,
)
from etl_craft.operations.specs.plan import plan_title, planned_edits
from etl_craft.specs.loader import load_specs
from etl_craft.specs.model import PipelineSpec, SpecError


@dataclass(frozen=True)
class _Defined:
    """The project's specs, and the one that defines the edited pipeline."""

    project: Project
    specs: tuple[PipelineSpec, ...]
    spec: PipelineSpec

    @property
    def file(self) -> str:
        return self.spec.source.relative_to(self.project.root).as_posix()


@dataclass(frozen=True)
class _SpecPreview:
    preview: EditPreview
    original: str  # the spec's text the preview was made from
    text: str | None  # the spec's new text; None when the spec can't take the edit


def defining_spec_file(ctx: OperationContext, pipeline: str) -> str | None:
    """The spec file that defines ``pipeline``, relative to the project; None without one.

    A spec that can't be read names no pipeline here: the pages that show this stay up, and a
    preview of an edit reports the spec's error."""
    try:
        found = _defined(ctx, pipeline)
    except SpecError:
        return None
    return None if found is None else found.file


def preview_metadata_edit(ctx: OperationContext, edits: Edits) -> EditPreview:
    """What applying ``edits`` writes, rehearsed; writes nothing."""
    batch = edit_batch(edits)
    found = _defined(ctx, batch[0].key["pipeline"])
    if found is None:
        return preview_edit(ctx, batch)
    return _spec_preview(ctx, found, batch).preview


def apply_metadata_edit(
    ctx: OperationContext, edits: Edits, expected_file_name: str, expected_spec_digest: str = ""
) -> AppliedEdit:
    """Write what the preview named, the spec file first when one defines the pipeline, and
    apply the migration; a failure leaves the spec, the migrations and the rows as they were.

    ``expected_spec_digest`` is the previewed SpecChange's: a spec changed since is refused."""
    batch = edit_batch(edits)
    found = _defined(ctx, batch[0].key["pipeline"])
    if found is None:
        return apply_edit(ctx, batch, expected_file_name)
    planned = _spec_preview(ctx, found, batch)
    confirm(planned.preview, expected_file_name)
    if planned.preview.spec is None or planned.preview.spec.digest != expected_spec_digest:
        raise MigrationConflictError(
            f"{found.file} is not the text the edit was previewed on: it changed meanwhile, or "
            "the preview was of a pipeline no spec defined; preview the edit again"
        )
    if planned.text is None:  # confirm refuses such a preview; this keeps the types honest
        raise NotInPlace(f"{found.file} can't take the edit")
    source = found.spec.source
    _write_whole(source, planned.text)
    try:
        applied = apply_previewed(ctx, planned.preview)
    except BaseException:
        _write_whole(source, planned.original)
        raise
    return replace(applied, spec=planned.preview.spec)


def _defined(ctx: OperationContext, pipeline: str) -> _Defined | None:
    if ctx.project is None or not ctx.acts_on_own_project:
        return None
    specs = load_specs(ctx.project.pipelines_dir)
    spec = next((s for s in specs if s.code == pipeline), None)
    return None if spec is None else _Defined(ctx.project, specs, spec)


def _spec_preview(
    ctx: OperationContext, found: _Defined, edits: tuple[MetadataEdit, ...]
) -> _SpecPreview:
    original = found.spec.source.read_text(encoding="utf-8")
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()
    try:
        text = edited_text(found.spec, original, edits)
    except NotInPlace as error:
        why = _remedy(found.file, f"the edit can't be made to the spec in place: {error}")
        refused = replace(preview_edit(ctx, edits), refusal=why)
        change = SpecChange(found.file, "", why, digest)
        return _SpecPreview(replace(refused, spec=change), original, None)
    plan = planned_edits(ctx, _with_edited(found, load_edited(found.spec, text)))
    preview = preview_edit(ctx, plan, title=plan_title(plan))
    unwritable = _unwritable(found)
    refusal = None if unwritable is None else _remedy(found.file, unwritable)
    change = SpecChange(found.file, spec_diff(found.file, original, text), refusal, digest)
    return _SpecPreview(
        replace(preview, spec=change, refusal=refusal or preview.refusal), original, text
    )


def _with_edited(found: _Defined, edited: tuple[PipelineSpec, ...]) -> tuple[PipelineSpec, ...]:
    """The project's specs with the edited file's in their place, in the order plan reads."""
    source = found.spec.source
    before = tuple(s for s in found.specs if s.source.name < source.name)
    after = tuple(s for s in found.specs if s.source.name > source.name)
    return (*before, *edited, *after)


def _remedy(file: str, why: str) -> str:
    return (
        f"{why}; this pipeline is defined by {file}; edit it there and run plan "
        "(etl-craft plan --write, then etl-craft migrate)"
    )


def _unwritable(found: _Defined) -> str | None:
    """Why the editor can't write the spec and the next migration; None when it can."""
    root = found.project.root
    for folder in (found.spec.source.parent, found.project.migrations_dir):
        place = folder if folder.is_dir() else root
        try:
            with tempfile.NamedTemporaryFile(dir=place, prefix=".edit-check-"):
                pass
        except OSError as error:
            return f"the editor can't write in {place.relative_to(root)}/ ({error.strerror})"
    try:
        with found.spec.source.open("r+", encoding="utf-8"):
            pass
    except OSError as error:
        return f"the editor can't write {found.file} ({error.strerror})"
    return None


def _write_whole(path: Path, text: str) -> None:
    """Replace ``path``'s text whole or not at all, keeping its permissions."""
    with written_aside(path.parent, text) as temporary:
        shutil.copymode(path, temporary)
        temporary.replace(path)
