"""What every handler is given for one attempt, and what it gives back."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from etl_craft.config.connector import Connector
from etl_craft.config.project import Project
from etl_craft.core.actor import Actor
from etl_craft.core.counts import Counts
from etl_craft.core.redaction import Redactor
from etl_craft.enginedb.attempts import AttemptInvocation
from etl_craft.enginedb.connection import EngineDB
from etl_craft.enginedb.offsets import Offset


@dataclass(frozen=True)
class TaskEnvironment:
    """The resources of the task process: its configuration, project files and Engine DB."""

    connector: Connector
    project: Project | None
    engine: EngineDB
    log: logging.LoggerAdapter[logging.Logger]
    actor: Actor  # the owner acting for this attempt; its Engine DB writes name it
    redactor: Redactor  # the attempt's secrets (handlers/secrets), masked in all it records
    log_path: Path | None = None  # the attempt log, named by messages that point to it


@dataclass(frozen=True)
class HandlerResult:
    counts: Counts = field(default_factory=Counts)
    # An ingestion script's new offset, stored only with the attempt's SUCCESS.
    offset: Offset | None = None
    message: str | None = None


@dataclass(frozen=True)
class Task:
    invocation: AttemptInvocation
    environment: TaskEnvironment

    def parameter(self, name: str, default: str | None = None) -> str | None:
        value = self.invocation.parameters.get(name)
        return default if value is None or not value.strip() else value.strip()
