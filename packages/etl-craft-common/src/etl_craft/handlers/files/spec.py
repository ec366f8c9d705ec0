"""A file load's parameters, read once and checked: by validate, and again by the attempt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from etl_craft.core.errors import MetadataError
from etl_craft.handlers.files.types import parse_columns
from etl_craft.warehouse.dialect import Column


class FileFormat(StrEnum):
    CSV = "CSV"
    JSONL = "JSONL"
    PARQUET = "PARQUET"


@dataclass(frozen=True)
class FileLoadSpec:
    pattern: str  # a glob, relative to the project folder unless absolute
    format: FileFormat
    target: str
    columns: tuple[Column, ...] | None  # None: inferred (from the target, else the files)
    header: bool = True
    delimiter: str = ","
    null: str = ""

    def base(self, project_root: Path) -> Path:
        """The folder the glob starts from: the project's root for a relative pattern."""
        written = PurePosixPath(self.pattern.replace("\\", "/"))
        return Path("/") if written.is_absolute() else project_root

    def matches(self, project_root: Path) -> list[Path]:
        written = PurePosixPath(self.pattern.replace("\\", "/"))
        relative = written.relative_to("/") if written.is_absolute() else written
        base = self.base(project_root)
        return sorted(p for p in base.glob(str(relative)) if p.is_file())


def _pattern(value: str) -> str | None:
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if not parts or ".." in parts:
        return "expected a glob without .. parts, such as landing/orders/*.csv"
    return None


def _columns(value: str) -> str | None:
    try:
        parse_columns(value)
    except ValueError as error:
        return str(error)
    return None


def _delimiter(value: str) -> str | None:
    # A value of one space or tab is stripped to nothing before it gets here: write TAB.
    return None if len(value) == 1 or value == "TAB" else "expected one character, or TAB"


FILE_FORMS: Mapping[str, Callable[[str], str | None]] = {
    "FILE_PATTERN": _pattern,
    "FILE_COLUMNS": _columns,
    "CSV_DELIMITER": _delimiter,
}
CSV_ONLY = ("CSV_HEADER", "CSV_DELIMITER", "CSV_NULL")


def shape_problems(parameter: Callable[[str], str | None]) -> list[tuple[str, str, str]]:
    """(parameter, problem, remedy) for each way the file load's parameters don't fit together."""
    offset_type = parameter("OFFSET_TYPE")
    checks = (
        (
            parameter("FILE_FORMAT") is None,
            "FILE_FORMAT",
            "FILE_FORMAT is not set; expected CSV, JSONL or PARQUET for a task with FILE_PATTERN",
            "add FILE_FORMAT for the task in CFG_TASK_PARAMETERS",
        ),
        (
            parameter("TARGET_OBJECT") is None,
            "TARGET_OBJECT",
            "TARGET_OBJECT is not set; expected the table the files land in, schema.table",
            "add TARGET_OBJECT for the task in CFG_TASK_PARAMETERS",
        ),
        (
            offset_type not in (None, "TEXT"),
            "OFFSET_TYPE",
            f"OFFSET_TYPE is {offset_type!r}; a file load keeps the files it landed as a TEXT "
            "offset",
            "delete OFFSET_TYPE (or set it to TEXT) in CFG_TASK_PARAMETERS",
        ),
        (
            parameter("CSV_HEADER") == "N" and parameter("FILE_COLUMNS") is None,
            "FILE_COLUMNS",
            "CSV_HEADER is N but FILE_COLUMNS is not set; expected the columns in file order",
            "declare FILE_COLUMNS (name TYPE, ...) or set CSV_HEADER to Y in CFG_TASK_PARAMETERS",
        ),
    )
    return [(name, problem, remedy) for failed, name, problem, remedy in checks if failed]


def _value_problems(parameter: Callable[[str], str | None]) -> list[tuple[str, str, str]]:
    found = []
    forms = {**FILE_FORMS, "FILE_FORMAT": _file_format}
    for name, form in forms.items():
        value = parameter(name)
        problem = None if value is None else form(value)
        if problem is not None:
            remedy = f"fix {name} in CFG_TASK_PARAMETERS"
            found.append((name, f"{name} is {value!r}; {problem}", remedy))
    return found


def _file_format(value: str) -> str | None:
    return None if value in tuple(FileFormat) else f"expected one of {', '.join(FileFormat)}"


def read_spec(task_code: str, parameter: Callable[[str], str | None]) -> FileLoadSpec:
    """The checked spec of a file load task; MetadataError naming the first problem."""
    problems = shape_problems(parameter) + _value_problems(parameter)
    if problems:
        _, problem, remedy = problems[0]
        raise MetadataError(f"task {task_code}: {problem}; {remedy}")
    declared = parameter("FILE_COLUMNS")
    delimiter = parameter("CSV_DELIMITER") or ","
    return FileLoadSpec(
        pattern=str(parameter("FILE_PATTERN")),
        format=FileFormat(str(parameter("FILE_FORMAT"))),
        target=str(parameter("TARGET_OBJECT")),
        columns=None if declared is None else parse_columns(declared),
        header=parameter("CSV_HEADER") != "N",
        delimiter="\t" if delimiter == "TAB" else delimiter,
        null=parameter("CSV_NULL") or "",
    )
