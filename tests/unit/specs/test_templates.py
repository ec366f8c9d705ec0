"""Template spec files: one pipeline per instance, and refusals that name the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.specs.loader import load_spec_file
from etl_craft.specs.model import PipelineSpec, SpecError

TEMPLATE = """\
schedule: "0 6 * * *"
parameters:
  CLIENT: {type: STRING}
  DAYS: {type: INT, value: 3}
tasks:
  load:
    action: CREATE_TABLE
    target: dm.orders
    sql: orders.sql
    parameters: {PIPELINE_ID_SUBSTITUTION: "Y"}
instances:
"""


def load(tmp_path: Path, instances: str) -> tuple[PipelineSpec, ...]:
    path = tmp_path / "clients.yml"
    path.write_text(TEMPLATE + instances)
    return load_spec_file(path)


def test_each_instance_is_a_pipeline_with_its_values_and_changes(tmp_path: Path) -> None:
    specs = load(
        tmp_path,
        "  north: {parameters: {CLIENT: n}}\n"
        "  south:\n"
        "    schedule: null\n"
        '    parameters: {CLIENT: "s\'; --", DAYS: 7}\n'
        "    tasks: {load: {target: dm.south, parameters: {ROW_ID: id}}}\n",
    )

    north, south = specs
    assert (north.code, south.code) == ("north", "south")
    assert [(p.name, p.value, p.type) for p in south.parameters] == [
        ("CLIENT", "s'; --", "STRING"),
        ("DAYS", "7", "INT"),
    ]
    assert [(p.name, p.value) for p in north.parameters] == [("CLIENT", "n"), ("DAYS", "3")]
    assert (north.settings["RUN_SCHEDULE"], south.settings["RUN_SCHEDULE"]) == ("0 6 * * *", None)
    assert dict(north.tasks[0].parameters)["TARGET_OBJECT"] == "dm.orders"
    assert dict(south.tasks[0].parameters) == {
        "ACTION": "CREATE_TABLE",
        "TARGET_OBJECT": "dm.south",
        "SOURCE_SQL_FILE": "orders.sql",
        "PIPELINE_ID_SUBSTITUTION": "Y",
        "ROW_ID": "id",
    }


@pytest.mark.parametrize(
    ("instances", "path", "found"),
    [
        ("  north: {}\n", "/instances/north/parameters", "no value for parameter CLIENT"),
        (
            "  north: {parameters: {CLIENT: n, DAYZ: 1}}\n",
            "/instances/north/parameters/DAYZ",
            "parameter DAYZ, which the template doesn't declare",
        ),
        (
            "  north: {parameters: {CLIENT: n, DAYS: three}}\n",
            "/instances/north/parameters/DAYS",
            "'three' for parameter DAYS of type INT",
        ),
        (
            "  north: {parameters: {CLIENT: n, DAYS: 99999999999999999999}}\n",
            "/instances/north/parameters/DAYS",
            "'99999999999999999999' for parameter DAYS of type INT",
        ),
        (
            "  north: {parameters: {CLIENT: n}, tasks: {lod: {target: dm.x}}}\n",
            "/instances/north/tasks/lod",
            "task lod, which the template doesn't have",
        ),
        (
            "  north: {parameters: {CLIENT: n}, tasks: {load: {colour: red}}}\n",
            "/instances/north/tasks/load",
            "",
        ),
    ],
)
def test_an_instance_the_template_cannot_take_is_refused_by_place(
    tmp_path: Path, instances: str, path: str, found: str
) -> None:
    with pytest.raises(SpecError) as refused:
        load(tmp_path, instances)

    assert refused.value.path == path
    assert found in refused.value.found


def test_a_plain_pipeline_value_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "daily.yml"
    path.write_text(
        "parameters: {SINCE: {type: DATE, value: yesterday}}\ntasks: {t: {sql: a.sql}}\n"
    )

    with pytest.raises(SpecError) as refused:
        load_spec_file(path)

    assert refused.value.path == "/parameters/SINCE"
    assert refused.value.expected == "a date such as 2026-01-31"


NAMED = """\
parameters:
  LANDING: {type: IDENTIFIER}
  CLIENT: {type: STRING, value: acme}
tasks:
  land:
    action: CREATE_TABLE
    target: $$ident.LANDING
    sql: land.sql
instances:
"""


def test_an_identifier_names_each_instances_own_target(tmp_path: Path) -> None:
    path = tmp_path / "clients.yml"
    path.write_text(
        NAMED + "  a: {parameters: {LANDING: lnd.a}}\n  b: {parameters: {LANDING: b_x}}\n"
    )

    targets = [spec.tasks[0].parameter("TARGET_OBJECT") for spec in load_spec_file(path)]

    assert targets == ["lnd.a", "b_x"]


@pytest.mark.parametrize(
    ("instance", "place", "found"),
    [
        (
            '{parameters: {LANDING: "lnd.a; DROP TABLE x"}}',
            "/instances/a/parameters/LANDING",
            "IDENTIFIER",
        ),
        (
            "{parameters: {LANDING: lnd.a}, tasks: {land: {target: $$ident.CLIENT}}}",
            "/tasks/land/TARGET_OBJECT",
            "$$ident.CLIENT",
        ),
    ],
)
def test_a_name_that_is_not_a_plain_identifier_is_refused(
    tmp_path: Path, instance: str, place: str, found: str
) -> None:
    path = tmp_path / "clients.yml"
    path.write_text(NAMED + f"  a: {instance}\n")

    with pytest.raises(SpecError) as refused:
        load_spec_file(path)

    assert (refused.value.path, found in refused.value.found) == (place, True)
