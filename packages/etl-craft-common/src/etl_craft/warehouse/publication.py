"""Publication: how a warehouse makes an attempt's writes visible exactly once.

The SQL actions are written once; what differs between warehouses is how their result becomes
visible, and where the attempt's fence is checked (Capabilities.publication): one transaction,
one table snapshot, or one catalog operation. Each connection names its Publisher.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from etl_craft.core.counts import Counts
from etl_craft.warehouse.ledger import LedgerEntry
from etl_craft.warehouse.targets import DEFAULT_LEDGER_SCHEMA, TargetObject

if TYPE_CHECKING:
    from etl_craft.warehouse.connection import WarehouseConnection


@dataclass(frozen=True)
class Fence:
    """Which attempt of which task run publishes, and where the warehouse keeps its ledger."""

    task_run_id: int
    attempt_id: int
    ledger_schema: str = DEFAULT_LEDGER_SCHEMA


class Publisher(ABC):
    """The unit in which an attempt's writes become visible, fenced.

    What the block of ``publishing`` writes becomes visible when it ends, together with the entry
    given to ``record``, or not at all. If a later attempt of the same task run has already
    published, the block is refused with StaleTransitionError and nothing it wrote is visible.
    """

    @abstractmethod
    def publishing(
        self, conn: WarehouseConnection, target: TargetObject | None, fence: Fence
    ) -> AbstractContextManager[None]:
        """Around the writes of one attempt: ``target`` is the table written, None for a
        script's free-form writes."""

    @abstractmethod
    def record(self, conn: WarehouseConnection, entry: LedgerEntry, fence: Fence) -> None:
        """Inside ``publishing``: the attempt's counts, made visible with its data."""

    @abstractmethod
    def applied(
        self, conn: WarehouseConnection, attempt_id: int, ledger_schema: str
    ) -> Counts | None:
        """The counts the attempt published, or None when nothing of it is visible."""
