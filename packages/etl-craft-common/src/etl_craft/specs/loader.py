"""Read a project's ``pipelines/*.yml``: YAML, then the JSON schema, then the model.

Every refusal is a SpecError naming the file, the place in the document, the value found,
what was expected and the remedy.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, cast

import yaml
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match
from jsonschema.protocols import Validator

from etl_craft.core import ranges
from etl_craft.specs.model import PipelineSpec, SpecError
from etl_craft.specs.positions import key_lines
from etl_craft.specs.templates import pipelines_of

SPEC_SUFFIXES = (".yml", ".yaml")


class _SpecLoader(yaml.SafeLoader):
    """YAML as the CFG_ rows hold it: a date stays the text it was written as."""


_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def spec_files(folder: Path) -> tuple[Path, ...]:
    if not folder.is_dir():
        return ()
    found = (p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return tuple(sorted(p for p in found if p.suffix in SPEC_SUFFIXES))


def load_specs(folder: Path) -> tuple[PipelineSpec, ...]:
    """Every pipeline the folder's spec files describe, in file name order."""
    specs: dict[str, PipelineSpec] = {}
    for path in spec_files(folder):
        for spec in load_spec_file(path):
            if spec.code in specs:
                raise SpecError(
                    path,
                    "/",
                    f"pipeline {spec.code}, which {specs[spec.code].source.name} describes too",
                    "each pipeline in one spec file",
                    "remove one of the two files",
                )
            specs[spec.code] = spec
    return tuple(specs.values())


def load_spec_file(path: Path) -> tuple[PipelineSpec, ...]:
    text = _text(path)
    try:
        document = _document(path, text)
        problem = best_match(_validator().iter_errors(document))
        if problem is not None:
            raise _schema_error(path, problem)
        return pipelines_of(document, path)
    except SpecError as error:
        raise error.at(key_lines(text)) from error.__cause__


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SpecError(
            path, "/", f"a file that can't be read ({error})", "UTF-8 YAML", "fix it"
        ) from error


def _document(path: Path, text: str) -> dict[str, Any]:
    try:
        document = yaml.load(text, Loader=_SpecLoader)  # noqa: S506
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "the file"
        reason = getattr(error, "problem", None) or str(error)
        raise SpecError(
            path,
            "/",
            f"text YAML can't read at {where} ({reason})",
            "a YAML mapping",
            "fix it",
            mark.line + 1 if mark else None,
        ) from error
    if not isinstance(document, dict):
        raise SpecError(
            path,
            "/",
            f"a {type(document).__name__}",
            "a mapping of pipeline settings with tasks:",
            "start from the example in the pipeline specs guide",
        )
    return document


@cache
def _validator() -> Validator:
    schema = json.loads((files("etl_craft.specs") / "schema.json").read_text(encoding="utf-8"))
    # "range" names one of core.ranges, so a spec's numbers obey the same bounds as elsewhere.
    checked = validators.extend(  # type: ignore[no-untyped-call]
        Draft202012Validator, {"range": _in_range}
    )
    return cast(Validator, checked(schema))


def _in_range(
    _validator: Validator, name: str, value: object, _schema: Mapping[str, object]
) -> Iterator[ValidationError]:
    allowed = ranges.BY_NAME[name]
    if value is not None and allowed.problem(value) is not None:
        yield ValidationError(allowed.expectation.removeprefix("expected "))


def _schema_error(path: Path, error: ValidationError) -> SpecError:
    where = "/" + "/".join(str(part) for part in error.absolute_path)
    found = json.dumps(error.instance, default=str)
    if len(found) > 80:
        found = found[:77] + "..."
    expected = _expectation(error)
    return SpecError(path, where, found, expected, "correct the value or remove the key")


def _listed(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else [str(value)]


def _expectation(error: ValidationError) -> str:
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "additionalProperties":
        known = ", ".join(sorted(schema.get("properties", {}))) or "none"
        return f"only the keys {known} ({error.message})"
    if error.validator == "enum":
        return "one of " + ", ".join(str(v) for v in schema.get("enum", ()))
    if error.validator == "type":
        return f"a value of type {' or '.join(_listed(error.validator_value))}"
    if error.validator == "range":
        return error.message
    if error.validator == "pattern":
        return f"a code matching {error.validator_value}"
    described = schema.get("description")
    return f"{error.message}" + (f" ({described})" if described else "")
