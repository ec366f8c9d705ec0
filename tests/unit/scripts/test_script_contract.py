"""The script result is checked whole; offsets keep their type and precision or are refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any, cast

import pytest

from etl_craft.core.errors import MetadataError, ScriptError
from etl_craft.enginedb.offsets import Offset, OffsetType
from etl_craft.handlers.scripts import parse_input_params, parse_offset_type
from etl_craft.handlers.scripts.contract import cast_offset, check_result
from etl_craft.handlers.scripts.runner import check_stored
from etl_craft.scripting import ScriptResult


class NanoTimestamp(datetime):
    """What pandas.Timestamp looks like to the offset store: a datetime with nanoseconds."""

    nanosecond = 789

    def __str__(self) -> str:
        return f"{self.strftime('%Y-%m-%d %H:%M:%S')}.{self.microsecond:06d}{self.nanosecond}"


@pytest.mark.parametrize(
    ("offset_type", "value"),
    [
        (OffsetType.INT, 9_007_199_254_740_993),  # beyond a float's exact range
        (OffsetType.TEXT, "cursor:é/ü\n42"),
        (OffsetType.TIMESTAMP, datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),
        (
            OffsetType.TIMESTAMP,
            datetime(2026, 3, 29, 2, 30, 0, 1, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        ),
    ],
)
def test_offsets_round_trip_through_their_text_exactly(
    offset_type: OffsetType, value: int | str | datetime
) -> None:
    offset = Offset(offset_type, cast_offset(value, offset_type))
    decoded = Offset.decode(offset_type.value, offset.encode())
    assert decoded.value == value
    assert type(decoded.value) is type(value)


def test_a_timestamp_with_nanoseconds_is_refused_naming_the_value() -> None:
    value = NanoTimestamp(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    with pytest.raises(ScriptError, match=r"offset 2026-01-01 00:00:00\.123456789 has nanosec"):
        cast_offset(value, OffsetType.TIMESTAMP)


def test_a_naive_timestamp_is_refused() -> None:
    with pytest.raises(ScriptError, match="no time zone.*replace"):
        cast_offset(datetime(2026, 1, 1), OffsetType.TIMESTAMP)


@pytest.mark.parametrize(
    ("offset_type", "value"),
    [
        (OffsetType.INT, 1.5),
        (OffsetType.INT, True),
        (OffsetType.INT, "12"),
        (OffsetType.TEXT, 12),
        (OffsetType.TIMESTAMP, "2026-01-01"),
    ],
)
def test_an_offset_of_the_wrong_type_is_refused(offset_type: OffsetType, value: object) -> None:
    with pytest.raises(ScriptError, match=f"OFFSET_TYPE {offset_type} expects"):
        cast_offset(value, offset_type)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ({"row_count": 1}, "returned dict.*expected ScriptResult"),
        (ScriptResult(-1), "row_count -1"),
        (ScriptResult(True), "row_count True"),
        (ScriptResult(3, offset=cast(Any, 2.5)), "OFFSET_TYPE INT expects"),
    ],
)
def test_the_whole_result_is_checked(result: object, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        check_result(result, OffsetType.INT, "load.py")


def test_an_offset_without_an_offset_type_is_refused() -> None:
    with pytest.raises(ScriptError, match="no OFFSET_TYPE"):
        check_result(ScriptResult(1, offset=5), None, "load.py")


def test_no_offset_keeps_the_stored_one() -> None:
    assert check_result(ScriptResult(4), OffsetType.INT, "load.py").offset is None


@pytest.mark.parametrize(
    ("text", "message"),
    [("[1, 2]", "JSON list; expected a JSON object"), ("{oops", "not valid JSON")],
)
def test_input_params_must_be_a_json_object(text: str, message: str) -> None:
    with pytest.raises(MetadataError, match=message):
        parse_input_params(text, "load_crm")


def test_input_params_arrive_as_a_dict() -> None:
    assert parse_input_params('{"page": 5, "names": ["a"]}', "t") == {"page": 5, "names": ["a"]}
    assert parse_input_params(None, "t") == {}


def test_offset_type_is_checked_and_matches_the_stored_offset() -> None:
    assert parse_offset_type(" timestamp ", "t") is OffsetType.TIMESTAMP
    with pytest.raises(MetadataError, match="OFFSET_TYPE of task t is 'DATE'"):
        parse_offset_type("DATE", "t")
    with pytest.raises(MetadataError, match="stored TEXT offset"):
        check_stored(Offset(OffsetType.TEXT, "a"), OffsetType.INT, "t")
