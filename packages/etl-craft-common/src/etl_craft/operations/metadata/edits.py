"""Metadata edits as migration files: preview them, then apply them through migrate.

An edit never writes CFG_ rows itself. It becomes the project's next numbered migration file,
which a team reviews like any other. The preview rehearses that file in a transaction that is
rolled back, so the before/after rows and validate's findings are exactly what migrate will
meet; applying writes the file and runs etl-craft migrate as the edit's actor, which records
the actor and the file in AUD_METADATA_CHANGES.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from etl_craft.core.errors import MetadataError, MigrationError, UsageError
from etl_craft.enginedb.connection import EngineConnection
from etl_craft.enginedb.interventions import metadata_changes_of_migration
from etl_craft.enginedb.metadata import read_project_metadata
from etl_craft.enginedb.migrations import (
    MigrationFile,
    next_project_version,
    rehearse_project_file,
)
from etl_craft.handlers.secrets import sensitive_names
from etl_craft.operations.audit import MetadataChangeEntry, change_entry
from etl_craft.operations.context import OperationContext
from etl_craft.operations.metadata.edit_checks import MetadataEdit, check_edit, rows_problem
from etl_craft.operations.metadata.edit_sql import delete_sql, insert_sql, update_sql
from etl_craft.operations.metadata.spec_change import SpecChange
from etl_craft.operations.migrate_validation import (
    failures_of,
    project_metadata_or_none,
    refusal_lines,
    validate_changed,
)
from etl_craft.operations.setup import migrate
from etl_craft.operations.validate.report import ValidateReport

__all__ = [
    "AppliedEdit",
    "EditPreview",
    "MetadataEdit",
    "MigrationConflictError",
    "apply_edit",
    "apply_previewed",
    "confirm",
    "edit_batch",
    "preview_edit",
    "write_new_file",
    "written_aside",
]
# One edit, or several that make sense only together (a new task with its parameters).
Edits = MetadataEdit | tuple[MetadataEdit, ...]


class MigrationConflictError(MigrationError):
    """The project got another migration between the preview and the apply."""


@dataclass(frozen=True)
class EditPreview:
    schema: ClassVar[str] = "etl-craft/metadata-edit-preview/1"
    edits: tuple[MetadataEdit, ...]
    file_name: str
    sql: str
    changes: tuple[MetadataChangeEntry, ...]  # the CFG_ rows the file changes, before and after
    validation: ValidateReport | None  # validate on the pipelines the file changes
    refusal: str | None  # why applying is refused; None when it may be applied
    spec: SpecChange | None = None  # the spec file that defines the pipeline, when one does

    @property
    def refused(self) -> bool:
        return self.refusal is not None


@dataclass(frozen=True)
class AppliedEdit:
    schema: ClassVar[str] = "etl-craft/metadata-edit/1"
    edits: tuple[MetadataEdit, ...]
    file_name: str
    path: Path
    sql: str
    changes: tuple[MetadataChangeEntry, ...]
    action_id: int
    spec: SpecChange | None = None


def preview_edit(ctx: OperationContext, edits: Edits, *, title: str | None = None) -> EditPreview:
    """The file ``edits`` would become, rehearsed as migrate would apply it; writes nothing.

    ``title`` names the file (NNNN_<title>.sql); the first edit names it otherwise.
    """
    batch = edit_batch(edits)
    folder = _migrations_dir(ctx)
    version = next_project_version(ctx.engine, project_code=ctx.project_code, folder=folder)
    name = file_name(version, batch) if title is None else titled_name(version, title)
    migration = MigrationFile(version, name, edit_sql(ctx, batch))
    seen = _Rehearsal(ctx, batch)
    try:
        rehearse_project_file(
            ctx.engine,
            ctx.actor,
            project_code=ctx.project_code,
            folder=folder,
            migration=migration,
            check=seen,
        )
    except MigrationError as error:
        if f"migration {migration.name} " not in str(error):
            raise  # a problem of the project's files, not of this edit
        seen.refusal = str(error)
    return EditPreview(
        batch, migration.name, migration.sql, seen.changes, seen.validation, seen.refusal
    )


def apply_edit(ctx: OperationContext, edits: Edits, expected_file_name: str) -> AppliedEdit:
    """Write ``edits`` as the file their preview named and apply it with migrate; refused when
    the project's next file is another one by now, or when the preview refuses it. A failure
    leaves neither the file nor any applied row."""
    preview = preview_edit(ctx, edits)
    confirm(preview, expected_file_name)
    return apply_previewed(ctx, preview)


def confirm(preview: EditPreview, expected_file_name: str) -> None:
    """Refuse a preview that is not the one confirmed, or that may not be applied."""
    if preview.file_name != expected_file_name:
        raise MigrationConflictError(
            f"the edit was previewed as {expected_file_name}, but the project's next migration "
            f"is now {preview.file_name}: another migration arrived meanwhile; preview the edit "
            "again against the current metadata"
        )
    if preview.refusal is not None:
        raise MetadataError(preview.refusal)


def apply_previewed(ctx: OperationContext, preview: EditPreview) -> AppliedEdit:
    """Write a confirmed preview's file and apply it with migrate; the file goes on failure."""
    path = write_new_file(_migrations_dir(ctx), preview.file_name, preview.sql)
    try:
        report = migrate(ctx)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    with ctx.engine.read() as conn:
        rows = metadata_changes_of_migration(conn, preview.file_name)
    names = sensitive_names(ctx.connector)
    changes = tuple(change_entry(row, names) for row in rows)
    return AppliedEdit(
        preview.edits, preview.file_name, path, preview.sql, changes, report.action_id
    )


def edit_sql(ctx: OperationContext, edits: tuple[MetadataEdit, ...]) -> str:
    return "\n".join(_statement(ctx, edit) for edit in edits)


def _statement(ctx: OperationContext, edit: MetadataEdit) -> str:
    spec, key, project = edit.spec, dict(edit.key), ctx.project_code
    described = edit.describe()
    header = f"-- {described[0].upper()}{described[1:]}, for {ctx.actor.name}.\n"
    if edit.after is None:
        return header + delete_sql(spec, project, key)
    if edit.before is None:
        return header + insert_sql(spec, project, key, edit.changed)
    return header + update_sql(spec, project, key, edit.changed)


def file_name(version: int, edits: tuple[MetadataEdit, ...]) -> str:
    first = edits[0]
    codes = "_".join(first.key[name] for name in first.spec.key_names[1:])
    return titled_name(version, f"{first.verb}_{first.kind.value}_{codes or first.key['pipeline']}")


def titled_name(version: int, words: str) -> str:
    return f"{version:04d}_{re.sub(r'[^A-Za-z0-9_]', '_', words)[:80]}.sql"


@dataclass
class _Rehearsal:
    """The FileCheck of a preview: notes what the file did and what validate says of it."""

    ctx: OperationContext
    edits: tuple[MetadataEdit, ...]
    changes: tuple[MetadataChangeEntry, ...] = ()
    validation: ValidateReport | None = None
    refusal: str | None = None

    def __call__(self, conn: EngineConnection) -> Callable[[MigrationFile], None]:
        before = project_metadata_or_none(conn, self.ctx.project_code)

        def judge(migration: MigrationFile) -> None:
            names = sensitive_names(self.ctx.connector)
            rows = metadata_changes_of_migration(conn, migration.name)
            self.changes = tuple(change_entry(row, names) for row in rows)
            after = read_project_metadata(conn, self.ctx.project_code)
            self.validation = validate_changed(self.ctx, before, after)
            failures = [] if self.validation is None else failures_of(self.validation)
            self.refusal = rows_problem(self.edits, self.changes) or (
                f"validate finds {len(failures)} failure(s) in the pipelines this edit "
                f"changes:\n{refusal_lines(failures)}"
                if failures
                else None
            )

        return judge


def edit_batch(edits: Edits) -> tuple[MetadataEdit, ...]:
    batch = (edits,) if isinstance(edits, MetadataEdit) else edits
    if not batch:
        raise UsageError("the edit holds no change; fill in the form first")
    for edit in batch:
        check_edit(edit)
    return batch


def _migrations_dir(ctx: OperationContext) -> Path:
    if ctx.project is None:
        raise UsageError(
            "metadata edits are written as migration files of a project, and this context has "
            "none; run from a project folder or pass --config"
        )
    if not ctx.acts_on_own_project:
        raise UsageError(
            f"project {ctx.project_code}'s metadata is written as migrations of its own folder, "
            f"and this service's folder is another project's ({ctx.project.root}); edit it in "
            f"a UI started from project {ctx.project_code}'s folder"
        )
    return ctx.project.migrations_dir


def write_new_file(folder: Path, name: str, sql: str) -> Path:
    """Write ``name`` whole or not at all, and never over a file that exists by then."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    try:
        with written_aside(folder, sql) as temporary:
            os.link(temporary, target)
    except FileExistsError as error:
        raise MigrationConflictError(
            f"migration {name} appeared in {folder} while the edit was applied: another edit "
            "took its number; preview the edit again"
        ) from error
    return target


@contextmanager
def written_aside(folder: Path, text: str) -> Iterator[Path]:
    """``text`` in a file of its own in ``folder``, on disk whole; gone again on the way out.

    A dot name is skipped by migrate and by the spec loader, so a half-written file is never
    taken for a migration or a spec: link or move it into place.
    """
    handle, temporary = tempfile.mkstemp(prefix=".edit-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        yield Path(temporary)
    finally:
        Path(temporary).unlink(missing_ok=True)
