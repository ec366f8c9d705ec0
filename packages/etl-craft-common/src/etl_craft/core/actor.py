"""Who acts: every write to the Engine DB names an actor and its kind."""

from __future__ import annotations

import getpass
import os
import socket
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from etl_craft.core.errors import ConfigurationError

ACTOR_VARIABLE = "ETL_CRAFT_ACTOR"
MAX_ACTOR_LENGTH = 128


class ActorKind(StrEnum):
    HUMAN = "HUMAN"
    SCHEDULE = "SCHEDULE"
    ORCHESTRATOR = "ORCHESTRATOR"
    WORKER = "WORKER"
    SYSTEM = "SYSTEM"


@dataclass(frozen=True)
class Actor:
    name: str
    kind: ActorKind

    def __post_init__(self) -> None:
        problem = actor_name_problem(self.name)
        if problem:
            raise ConfigurationError(f"actor name {self.name!r} {problem}")


def actor_name_problem(name: str) -> str | None:
    """Why ``name`` can't name an actor, or None when it can."""
    if not name.strip():
        return "is empty; expected a person, token or service name such as alice@laptop"
    if len(name) > MAX_ACTOR_LENGTH:
        return f"is {len(name)} characters long; expected at most {MAX_ACTOR_LENGTH}"
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return "holds control characters; expected printable text only"
    return None


SYSTEM = Actor("etl-craft", ActorKind.SYSTEM)


def human_actor(environ: dict[str, str] | None = None) -> Actor:
    """The person running a CLI command: ETL_CRAFT_ACTOR, else user@host."""
    env = os.environ if environ is None else environ
    if ACTOR_VARIABLE in env:
        value = env[ACTOR_VARIABLE]
        problem = actor_name_problem(value)
        if problem:
            raise ConfigurationError(
                f"{ACTOR_VARIABLE}={value!r} {problem}; set it to who is acting "
                f"(for example github:alice) or unset it to use user@host"
            )
        return Actor(value, ActorKind.HUMAN)
    return Actor(f"{getpass.getuser()}@{socket.gethostname()}", ActorKind.HUMAN)
