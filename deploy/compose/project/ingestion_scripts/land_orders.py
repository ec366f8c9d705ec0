"""Land the shop's orders after the stored offset into lnd.orders.

A stand-in for a read from the shop's API: order n belongs to customer n % 3 + 1 and costs
n * 10.50, so every run's rows are known in advance. INPUT_PARAMS {"orders_per_run": N}. The
offset is the highest order id landed. An attempt first removes what an earlier attempt of
the same task run landed, so a retry after a lost worker never doubles rows.
"""

from __future__ import annotations

from etl_craft.scripting import ScriptContext, ScriptResult


def run(context: ScriptContext) -> ScriptResult:
    first = int(context.offset or 0) + 1
    order_ids = range(first, first + int(context.input_params["orders_per_run"]))
    with context.warehouse() as warehouse, warehouse.transaction():
        mark = warehouse.dialect.placeholder
        warehouse.execute("create the landing schema", "CREATE SCHEMA IF NOT EXISTS lnd")
        warehouse.execute(
            "create the landing table",
            "CREATE TABLE IF NOT EXISTS lnd.orders (order_id BIGINT NOT NULL, "
            "customer_id BIGINT NOT NULL, amount DECIMAL(12, 2) NOT NULL, "
            "landed_by BIGINT NOT NULL)",
        )
        warehouse.execute(
            "forget what an earlier attempt landed",
            f"DELETE FROM lnd.orders WHERE landed_by = {mark}",
            [context.task_run_id],
        )
        for order_id in order_ids:
            warehouse.execute(
                "land an order",
                f"INSERT INTO lnd.orders VALUES ({mark}, {mark}, {mark}, {mark})",
                [order_id, order_id % 3 + 1, order_id * 10.5, context.task_run_id],
            )
    context.log.info("landed orders %d to %d", order_ids[0], order_ids[-1])
    return ScriptResult(row_count=len(order_ids), offset=order_ids[-1])
