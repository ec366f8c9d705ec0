"""Actors are validated where they enter; every error class has its own exit code."""

from __future__ import annotations

import pytest

from etl_craft.core import errors
from etl_craft.core.actor import ActorKind, human_actor
from etl_craft.core.errors import ConfigurationError, EtlCraftError


def test_the_actor_comes_from_the_variable() -> None:
    actor = human_actor({"ETL_CRAFT_ACTOR": "github:alice"})
    assert (actor.name, actor.kind) == ("github:alice", ActorKind.HUMAN)


def test_without_the_variable_the_actor_is_user_at_host() -> None:
    assert "@" in human_actor({}).name


@pytest.mark.parametrize(
    ("value", "problem"),
    [("", "is empty"), ("  ", "is empty"), ("a" * 129, "129 characters"), ("bob\x07", "control")],
)
def test_a_bad_actor_is_refused_naming_the_variable(value: str, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=f"ETL_CRAFT_ACTOR=.*{problem}.*unset it"):
        human_actor({"ETL_CRAFT_ACTOR": value})


def test_each_error_class_has_its_own_exit_code() -> None:
    classes = [
        value
        for value in vars(errors).values()
        if isinstance(value, type)
        and issubclass(value, EtlCraftError)
        and value is not EtlCraftError
    ]
    codes = [cls.exit_code for cls in classes]
    assert len(classes) >= 18
    assert len(set(codes)) == len(codes)
    assert not {0, 1} & set(codes)
