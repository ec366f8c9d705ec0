"""What is recorded is masked first, then cut; secret parameters follow the configured patterns."""

from __future__ import annotations

from datetime import date

from etl_craft.config.urls import mask_url, url_secrets
from etl_craft.core.enums import AttemptStatus, Handler
from etl_craft.core.redaction import MASK, Redactor, SensitiveNames, clip
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.handlers.secrets import DECLARED, attempt_redactor
from etl_craft.runtime.masked_output import LONGEST_LINE, LineMasker

SECRET = "hunter2-very-secret"


def test_a_cut_never_splits_a_mask() -> None:
    text = "x" * 9 + MASK + " tail"
    for limit in range(len(text) + 1):
        cut = clip(text, limit)
        assert len(cut) <= limit
        assert cut.endswith(MASK) or not cut.endswith("*"), (limit, cut)


def test_a_line_masker_masks_a_secret_split_between_reads() -> None:
    written: list[bytes] = []
    masker = LineMasker(Redactor([SECRET]), written.append)
    data = f"one {SECRET} two\nthree {SECRET}".encode()
    for byte in range(len(data)):
        masker.feed(data[byte : byte + 1])
    masker.close()
    assert b"".join(written) == f"one {MASK} two\nthree {MASK}".encode()


def test_a_line_longer_than_the_limit_is_cut_where_no_secret_spans() -> None:
    # The secret ends at every offset around the limit, so one of them straddles the cut.
    for end in range(LONGEST_LINE - 2, LONGEST_LINE + len(SECRET) + 2):
        written: list[bytes] = []
        masker = LineMasker(Redactor([SECRET]), written.append)
        masker.feed(b"a" * (end - len(SECRET)) + SECRET.encode())
        masker.feed(b"b" * 10)
        assert len(written) == 1, f"a line of {end} bytes was not cut"
        masker.close()
        out = b"".join(written)
        assert SECRET[1:].encode() not in out
        assert SECRET[:-1].encode() not in out
        assert MASK.encode() in out


def test_declared_parameters_are_never_secret_whatever_their_name() -> None:
    names = SensitiveNames(declared=DECLARED)
    assert {"MERGE_KEY", "MERGE_COMPARE_COLUMNS"} <= DECLARED
    assert not names.parameter("MERGE_KEY")
    assert names.parameter("API_KEY")
    assert names.key("merge_key")  # an INPUT_PARAMS key is judged by the patterns alone


def test_configured_patterns_replace_the_defaults_and_ignore_case() -> None:
    names = SensitiveNames(("*_PW",))
    assert names.parameter("warehouse_pw")
    assert not names.parameter("API_TOKEN")


def test_the_attempts_redactor_holds_its_secret_parameters() -> None:
    invocation = _invocation(
        parameters={
            "MERGE_KEY": "customer_id",
            "Api_Token": "tok-4242-abcd",
            "INPUT_PARAMS": '{"user": "etl", "auth": {"password": "pw-in-json-1"}}',
        },
        pipeline_parameters={"DB_PASSWORD": "pipeline-pw-9"},
    )
    redactor = attempt_redactor(None, invocation, {"url-pw-77"})
    shown = redactor("customer_id tok-4242-abcd pw-in-json-1 pipeline-pw-9 url-pw-77 etl")
    assert shown == f"customer_id {MASK} {MASK} {MASK} {MASK} etl"


def test_a_url_shows_no_password_in_userinfo_or_query() -> None:
    url = "postgresql://etl:pw-one@db/etl?sslmode=require&password=pw-two&PWD=pw-three"
    shown = mask_url(url)
    assert not any(secret in shown for secret in ("pw-one", "pw-two", "pw-three"))
    assert "sslmode=require" in shown
    assert "password=***" in shown
    assert url_secrets(url) == {"pw-one", "pw-two", "pw-three"}


def _invocation(**values: dict[str, str | None]) -> AttemptInvocation:
    return AttemptInvocation(
        attempt_id=1,
        attempt_number=1,
        status=AttemptStatus.RUNNING,
        owner_id=None,
        task_run_id=1,
        pipeline_run_id=1,
        pipeline_id=1,
        task_id=1,
        project_code="default",
        pipeline_code="p",
        task_code="t",
        handler=Handler.PYTHON,
        run_key="manual:test",
        run_date=date(2026, 11, 30),
        parameters=values["parameters"],
        pipeline_parameters=values["pipeline_parameters"],
    )
