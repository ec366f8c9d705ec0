"""Watching a run while another part of the process supervises it: what live progress shows."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from etl_craft.core.errors import EtlCraftError
from etl_craft.enginedb.connection import EngineConnection, EngineDB
from etl_craft.enginedb.run_lists import run_id_by_key
from etl_craft.operations.context import OperationContext
from etl_craft.operations.runs.views import RunView, pipeline_id_of, read_run_view

WATCH_SECONDS = 0.25


@dataclass
class RunWatcher:
    """Reads a run from the Engine DB a few times a second, on its own connection and thread.

    The run is named by id, or by pipeline and run key before it exists (the demo's runs)."""

    ctx: OperationContext
    report: Callable[[RunView], None]
    run_id: int | None = None
    pipeline_code: str | None = None
    run_key: str | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> RunWatcher:
        self._thread = threading.Thread(target=self._watch, name="run-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        engine = EngineDB(self.ctx.engine.url.render_as_string(hide_password=False))
        try:
            while not self._stop.wait(WATCH_SECONDS):
                with engine.read() as conn:
                    run_id = self._find(conn)
                    view = None if run_id is None else read_run_view(conn, run_id)
                if view is not None:
                    self.report(view)
        except EtlCraftError:
            pass  # the run itself reports what went wrong; the display only goes quiet
        finally:
            engine.dispose()

    def _find(self, conn: EngineConnection) -> int | None:
        if self.run_id is not None:
            return self.run_id
        assert self.pipeline_code is not None
        assert self.run_key is not None
        pipeline_id = pipeline_id_of(conn, self.ctx.project_code, self.pipeline_code)
        return run_id_by_key(conn, pipeline_id, self.run_key)
