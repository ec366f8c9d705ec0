"""A value set in a spec's text keeps the file's comments, quoting and layout."""

from __future__ import annotations

from etl_craft.specs.yaml_edit import set_value

SPEC = """\
# Alpha's landing. The comment stays.
description: Alpha into lnd
schedule: "*/15 * * * *"  # every quarter hour
max_parallel_tasks: 4
tasks:
  land:
    sql: |
      SELECT 1
    parameters: {FLAG: "Y", RETRIES: 1}
    input_params: {client: alpha}
"""


def test_a_plain_value_is_replaced_where_it_stands() -> None:
    assert set_value(SPEC, [("max_parallel_tasks",)], 3) == SPEC.replace(
        "max_parallel_tasks: 4", "max_parallel_tasks: 3"
    )


def test_a_quoted_value_stays_quoted_and_a_plain_number_stays_plain() -> None:
    flag = set_value(SPEC, [("tasks", "land", "parameters", "FLAG")], "N")
    retries = set_value(SPEC, [("tasks", "land", "parameters", "RETRIES")], "2")
    schedule = set_value(SPEC, [("schedule",)], "0 5 * * *")

    assert flag == SPEC.replace('{FLAG: "Y"', '{FLAG: "N"')
    assert retries == SPEC.replace("RETRIES: 1}", "RETRIES: 2}")
    assert schedule == SPEC.replace('"*/15 * * * *"', '"0 5 * * *"')


def test_a_missing_setting_is_added_after_the_others_before_the_tasks() -> None:
    added = set_value(SPEC, [("priority",)], 5)

    assert added == SPEC.replace("max_parallel_tasks: 4\n", "max_parallel_tasks: 4\npriority: 5\n")


def test_a_flow_mapping_takes_a_mapping_as_json() -> None:
    changed = set_value(SPEC, [("tasks", "land", "input_params")], {"client": "beta"})

    assert changed == SPEC.replace("{client: alpha}", '{"client": "beta"}')


def test_what_cant_be_set_in_place_is_left_to_the_person() -> None:
    assert set_value(SPEC, [("tasks", "land", "sql")], "SELECT 2") is None  # a block scalar
    assert set_value(SPEC, [("tasks", "land", "parameters", "NEW")], "x") is None  # flow mapping
    assert set_value(SPEC, [("tasks", "other", "action")], "CREATE_TABLE") is None
