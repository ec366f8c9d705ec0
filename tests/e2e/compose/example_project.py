"""The compose example project's ``orders`` pipeline, as the compose tests drive and check it.

Both ways of running the deployment (local processes in test_compose_topology.py, real
containers in test_containers.py) trigger and follow runs through the HTTP API with an
operator token, and compare the warehouse with the rows the project's runs are known to
leave: land_orders lands ``ORDERS_PER_RUN`` new orders per run, after the stored offset.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from tests.fixtures.waiting import wait_for

ENGINE, WAREHOUSE = "etl_craft_engine", "etl_craft_warehouse"
TASK_POOLS = {
    "land_orders": "ingestion",
    "setup_orders": "warehouse",
    "merge_orders": "warehouse",
    "customer_totals": "warehouse",
}
ORDERS_PER_RUN = 5
# The warehouse tables a run of orders writes, each read in a fixed order.
WAREHOUSE_QUERIES = {
    "lnd": "SELECT order_id FROM lnd.orders ORDER BY order_id",
    "dm": "SELECT order_id, customer_id, amount FROM dm.orders WHERE ACTIVE_FLAG = 'Y' "
    "ORDER BY order_id",
    "totals": "SELECT customer_id, order_count, revenue FROM dm.customer_totals ORDER BY 1",
}


def orders(runs: int) -> list[tuple[int, int, Decimal]]:
    """What the project's land_orders script lands in ``runs`` runs: (id, customer, amount)."""
    return [
        (order, order % 3 + 1, Decimal(order) * Decimal("10.50"))
        for order in range(1, runs * ORDERS_PER_RUN + 1)
    ]


def totals(runs: int) -> list[tuple[int, int, Decimal]]:
    found: dict[int, tuple[int, Decimal]] = {}
    for _, customer, amount in orders(runs):
        count, revenue = found.get(customer, (0, Decimal(0)))
        found[customer] = (count + 1, revenue + amount)
    return [(customer, *found[customer]) for customer in sorted(found)]


def expected_rows(runs: int) -> dict[str, list[Any]]:
    """What each of WAREHOUSE_QUERIES reads after ``runs`` successful runs."""
    return {
        "lnd": [(order,) for order, _, _ in orders(runs)],
        "dm": orders(runs),
        "totals": totals(runs),
    }


@dataclass(frozen=True)
class Api:
    base: str
    token: str

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)

    def trigger(self, pipeline: str, run_key: str) -> int:
        body = {"run_key": run_key, "reason": "compose e2e"}
        return int(self.call("POST", f"/api/v1/pipelines/{pipeline}/runs", body)["run_id"])

    def status(self, run_id: int) -> str:
        return str(self.call("GET", f"/api/v1/runs/{run_id}")["status"])

    def ended(self, run_id: int) -> bool:
        return self.status(run_id) not in ("QUEUED", "IN-PROGRESS")

    def follow(self, run_id: int, timeout: float = 45) -> str:
        wait_for(lambda: self.ended(run_id), f"run {run_id} to end", timeout)
        return self.status(run_id)
