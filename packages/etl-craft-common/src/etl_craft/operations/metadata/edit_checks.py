"""What a metadata edit is, and its checks: before its SQL is written, and after it ran.

Before: codes follow the code rule and each field has the type and choices of its column.
After (inside the rehearsal): the file changed exactly the rows the edits mean, and each
changed row still held what the editor showed (someone else may have changed it meanwhile).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from etl_craft.core.enums import EditKind
from etl_craft.core.errors import UsageError
from etl_craft.core.text import CODE_RULE, is_code
from etl_craft.operations.audit import MetadataChangeEntry
from etl_craft.operations.metadata.edit_kinds import FieldValue, KindSpec, spec_of

OPERATIONS = {"add": "INSERT", "change": "UPDATE", "remove": "DELETE"}


@dataclass(frozen=True)
class MetadataEdit:
    """One object added, changed or removed: ``before`` None adds it, ``after`` None removes it.

    ``key`` holds the codes of spec_of(kind).key_names. ``before`` holds the fields as the
    editor showed them; a change sets only the fields whose value differs, and is refused when
    the row no longer holds ``before``.
    """

    kind: EditKind
    key: Mapping[str, str]
    before: Mapping[str, FieldValue] | None = None
    after: Mapping[str, FieldValue] | None = None

    @property
    def spec(self) -> KindSpec:
        return spec_of(self.kind)

    @property
    def verb(self) -> str:
        return "add" if self.before is None else "remove" if self.after is None else "change"

    @property
    def changed(self) -> dict[str, FieldValue]:
        """The fields the file sets: every given one of a new row, the differing ones else."""
        after = dict(self.after or {})
        if self.before is None:
            return {column: value for column, value in after.items() if value is not None}
        return {c: v for c, v in after.items() if self.before.get(c) != v}

    def where(self) -> str:
        return ", ".join(f"{name} {self.key[name]}" for name in self.spec.key_names)

    def describe(self) -> str:
        return f"{self.verb} {self.spec.label} ({self.where()})"


def check_edit(edit: MetadataEdit) -> None:
    spec = edit.spec
    for name in spec.key_names:
        value = edit.key.get(name)
        if value is None or not is_code(value):
            raise UsageError(
                f"the {spec.label}'s {name} {value!r} breaks the code rule; expected {CODE_RULE}"
            )
    if edit.after is None and not spec.removable:
        raise UsageError(
            f"a {spec.label} is not removed but switched off: change its ACTIVE_FLAG to N"
        )
    for column, field_value in (edit.after or {}).items():
        _check_field(spec, column, field_value)
    if edit.before is not None and edit.after is not None and not edit.changed:
        raise UsageError(
            f"the edit changes no field of the {spec.label} ({edit.where()}); change one first"
        )


def _check_field(spec: KindSpec, column: str, value: FieldValue) -> None:
    found = spec.field(column)
    if found is None:
        known = ", ".join(f.column for f in spec.fields)
        raise UsageError(f"a {spec.label} has no field {column}; expected one of {known}")
    if found.integer and value is not None and not isinstance(value, int):
        raise UsageError(f"{spec.label} field {column} is {value!r}; expected a whole number")
    if found.choices and value is not None and value not in found.choices:
        raise UsageError(
            f"{spec.label} field {column} is {value!r}; expected one of {', '.join(found.choices)}"
        )


def rows_problem(
    edits: tuple[MetadataEdit, ...], changes: tuple[MetadataChangeEntry, ...]
) -> str | None:
    """Why the rows the file changed are not the ones the edits mean; None when they are."""
    wanted = Counter((edit.spec.table, OPERATIONS[edit.verb]) for edit in edits)
    found = Counter((change.table_name, change.operation) for change in changes)
    for edit in edits:
        place = (edit.spec.table, OPERATIONS[edit.verb])
        if found[place] < wanted[place]:
            return _missing(edit)
    for edit in edits:
        problem = _stale(edit, changes)
        if problem:
            return problem
    return None


def _missing(edit: MetadataEdit) -> str:
    spec = edit.spec
    if edit.verb == "add":
        return (
            f"the {spec.label} ({edit.where()}) can't be added: the pipeline or task it "
            "belongs to is not an active one of this project; check the codes"
        )
    return (
        f"the {spec.label} ({edit.where()}) is not there, or no longer active; reload the "
        "editor and start again"
    )


def _stale(edit: MetadataEdit, changes: tuple[MetadataChangeEntry, ...]) -> str | None:
    """The first field of a changed or removed row that no longer holds what was shown."""
    if edit.before is None:
        return None
    row = _row_of(edit, changes)
    if row is None:
        return None
    for column, shown in edit.before.items():
        found = row.get(column)
        if found == shown or (found is not None and str(found) == str(shown)):
            continue
        return (
            f"the {edit.spec.label} ({edit.where()}) has {column} {found!r} now, not {shown!r} "
            "as the editor showed it: someone changed it meanwhile; reload the editor and "
            "start again"
        )
    return None


def _row_of(
    edit: MetadataEdit, changes: tuple[MetadataChangeEntry, ...]
) -> dict[str, object] | None:
    """The before image of the edit's row, by its codes (the only row of its table else)."""
    spec = edit.spec
    rows = [
        {column.upper(): value for column, value in change.before.items()}
        for change in changes
        if change.table_name == spec.table and change.before is not None
    ]
    if spec.codes:
        rows = [r for r in rows if all(r.get(col) == edit.key[name] for name, col in spec.codes)]
    return rows[0] if len(rows) == 1 else None
