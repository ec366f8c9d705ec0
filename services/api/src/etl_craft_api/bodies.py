"""Request bodies: every field typed and bounded, and an unknown field or a NUL refused (422)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from etl_craft.core.text import CODE_PATTERN, NUL_PROBLEM, holds_nul

CODE = f"^{CODE_PATTERN.pattern}$"
MAX_REASON = 1000

Reason = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON)
]
Code = Annotated[str, StringConstraints(pattern=CODE, max_length=128)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if holds_nul(value):
            raise ValueError(NUL_PROBLEM)
        return value


class Trigger(Body):
    run_date: date | None = Field(default=None, description="YYYY-MM-DD; default: today")
    run_key: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        default=None, description="the run to act on, created when no run has this key"
    )
    reason: Reason | None = None


class BackfillDates(Body):
    first: date = Field(alias="from", description="the first run date, YYYY-MM-DD")
    last: date = Field(alias="to", description="the last run date, YYYY-MM-DD, included")
    reason: Reason


class Why(Body):
    reason: Reason


class Rerun(Why):
    with_downstream: Annotated[bool, Field(strict=True)] = Field(
        default=False,
        description="also redo the task's downstream task runs, each once its upstream reruns "
        "succeed (etl-craft server queues them); without it, only those the engine skipped",
    )


class RunMark(Body):
    status: Literal["SUCCESS", "FAILED", "SKIPPED"]
    reason: Reason


class TaskMark(RunMark):
    rows: Annotated[int, Field(ge=0, le=2**62)] | None = None


RoleName = Literal["viewer", "operator", "developer", "admin"]
UserNameText = Annotated[
    str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$", max_length=128)
]
Password = Annotated[str, StringConstraints(min_length=1, max_length=1024)]


class NewToken(Body):
    name: Code
    role: RoleName
    expires: Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,4}[dh]$")] | None = Field(
        default=None, description="a lifetime such as 90d or 12h; default: never expires"
    )


class MaybeWhy(Body):
    reason: Reason | None = None


class NewUser(Body):
    name: UserNameText
    role: RoleName
    password: Password | None = Field(
        default=None,
        description="at least 12 characters; leave it out for a user who signs in only through "
        "the OpenID provider",
    )
    display_name: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    email: Annotated[str, StringConstraints(min_length=3, max_length=320)] | None = None


class NewRole(Body):
    role: RoleName


class NewPassword(Body):
    password: Password = Field(description="at least 12 characters")
