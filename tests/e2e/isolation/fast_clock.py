"""`etl-craft server` whose schedules see a clock that runs faster than the wall clock.

Started as ``python -m tests.e2e.isolation.fast_clock SPEED server ...``: everything is the
real server in a real process, except that the instant handed to the schedules advances
SPEED seconds per real second from the moment the process started, so a one-minute
schedule ticks every 60/SPEED seconds. Run timestamps stay on the Engine DB's own clock.
"""

from __future__ import annotations

import sys
from datetime import datetime

from etl_craft.cli.main import main
from etl_craft.core.time import utc_now
from etl_craft.enginedb.connection import EngineDB
from etl_craft.scheduling.schedules import TickOutcome, create_due_runs
from etl_craft_overseer import overseer


def accelerate(speed: float) -> None:
    started = utc_now()

    def due_runs(engine: EngineDB, now: datetime) -> list[TickOutcome]:
        return create_due_runs(engine, started + (now - started) * speed)

    # The overseer's own name for the function: the one its housekeeping calls.
    setattr(overseer, "create_due_runs", due_runs)  # noqa: B010


if __name__ == "__main__":
    speed, *command = sys.argv[1:]
    accelerate(float(speed))
    main(command)
