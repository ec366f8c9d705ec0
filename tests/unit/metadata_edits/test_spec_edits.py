"""An edit of a template's pipeline lands on its own instance, never on what all instances share."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl_craft.core.enums import EditKind
from etl_craft.operations.metadata.edit_checks import MetadataEdit
from etl_craft.operations.metadata.spec_edits import NotInPlace, edited_text
from etl_craft.specs.loader import load_spec_file
from etl_craft.specs.model import PipelineSpec

TEMPLATE = """\
# One pipeline per client.
max_parallel_tasks: 4
parameters:
  CLIENT: {type: STRING}
tasks:
  load:
    action: CREATE_TABLE
    target: lnd.interactions
    source_sql: SELECT 1 AS a
instances:
  alpha:
    parameters: {CLIENT: alpha}
  beta:
    max_parallel_tasks: 2
    parameters:
      CLIENT: beta
"""


def pipelines(tmp_path: Path) -> dict[str, PipelineSpec]:
    path = tmp_path / "clients.yml"
    path.write_text(TEMPLATE)
    return {spec.code: spec for spec in load_spec_file(path)}


def setting(pipeline: str, before: int, after: int) -> MetadataEdit:
    return MetadataEdit(
        EditKind.PIPELINE,
        {"pipeline": pipeline},
        before={"MAX_PARALLEL_TASKS": before},
        after={"MAX_PARALLEL_TASKS": after},
    )


def test_an_instance_that_sets_the_value_has_it_changed(tmp_path: Path) -> None:
    edited = edited_text(pipelines(tmp_path)["beta"], TEMPLATE, (setting("beta", 2, 3),))

    assert edited == TEMPLATE.replace("max_parallel_tasks: 2", "max_parallel_tasks: 3")


def test_an_instance_that_shares_the_value_gets_its_own(tmp_path: Path) -> None:
    edited = edited_text(pipelines(tmp_path)["alpha"], TEMPLATE, (setting("alpha", 4, 3),))

    assert edited == TEMPLATE.replace(
        "    parameters: {CLIENT: alpha}\n",
        "    parameters: {CLIENT: alpha}\n    max_parallel_tasks: 3\n",
    )


def test_a_task_value_no_instance_can_hold_in_place_is_refused(tmp_path: Path) -> None:
    target = MetadataEdit(
        EditKind.TASK_PARAMETER,
        {"pipeline": "alpha", "task": "load", "parameter": "TARGET_OBJECT"},
        before={"PARAMETER_VALUE": "lnd.interactions"},
        after={"PARAMETER_VALUE": "lnd.alpha"},
    )

    with pytest.raises(NotInPlace, match="instances/alpha/tasks/load/target can't be set"):
        edited_text(pipelines(tmp_path)["alpha"], TEMPLATE, (target,))
