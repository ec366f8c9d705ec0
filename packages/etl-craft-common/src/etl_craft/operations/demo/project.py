"""etl-craft demo: the Support Insights demo project, set up and run in a working folder.

The project (examples/demo/etl-craft of a source checkout) is copied into the working folder
once; every call then brings its Engine DB up to date, writes the sources' next batch and
runs every pipeline in the foreground, in dependency order: the reference data, the three
ingestions, then the transform behind its gate. Offsets make each call land only the new
batch.
"""

from __future__ import annotations

import shlex
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from etl_craft.config.project import CONNECTOR_FILE, PROJECT_FOLDER
from etl_craft.core.errors import RunStateError, UsageError
from etl_craft.enginedb.connection import safe_url
from etl_craft.operations.context import ContextRequest, OperationContext, build_context
from etl_craft.operations.demo.sources import BatchReport, write_next_batch
from etl_craft.operations.demo.tables import LayerCount, count_layers
from etl_craft.operations.runs.foreground import RunRequest
from etl_craft.operations.runs.requests import PausedPipeline, request_run
from etl_craft.operations.runs.views import RunView
from etl_craft.operations.runs.watching import RunWatcher
from etl_craft.operations.setup import init_db, migrate

SOURCES_FOLDER = "sources"
# Dependency order: the transform's gate waits for a new run of each client pipeline.
PIPELINES = ("si_reference", "si_client_alpha", "si_client_beta", "si_client_gamma", "si_transform")
_NOT_COPIED = shutil.ignore_patterns("data", "logs", "__pycache__", ".env")


@dataclass(frozen=True)
class DemoRequest:
    folder: Path
    profile: str | None = None
    source: Path | None = None  # the demo project to copy; None: the checkout's examples/demo
    program: str = "etl-craft"  # how a shell calls etl-craft, in the commands to try next


@dataclass(frozen=True)
class DemoReport:
    schema: ClassVar[str] = "etl-craft/demo/1"
    folder: Path
    project_folder: Path
    profile: str | None
    engine_db: str
    batch: BatchReport
    runs: tuple[RunView, ...]
    layers: tuple[LayerCount, ...]
    seconds: float
    next_steps: tuple[str, ...]

    @property
    def succeeded(self) -> bool:
        return all(run.status.value == "SUCCESS" for run in self.runs)


class DemoObserver:
    """What the demo tells as it goes; the default tells nothing."""

    def step(self, text: str) -> None:
        """A setup step is done."""

    def progress(self, view: RunView, elapsed: float) -> None:
        """The run of a pipeline as it is now; called often while it runs."""

    def finished(self, view: RunView, elapsed: float) -> None:
        """The run of a pipeline has ended."""


def demo_source() -> Path:
    """The demo project of the source checkout this etl-craft is installed from."""
    here = Path(__file__).resolve()
    for folder in here.parents:
        candidate = folder / "examples" / "demo" / PROJECT_FOLDER
        if (candidate / CONNECTOR_FILE).is_file():
            return candidate
    raise UsageError(
        f"found no examples/demo/{PROJECT_FOLDER} above {here.parent}: etl-craft demo copies the "
        "demo project of an etl-craft source checkout; run it from a clone of the repository, "
        "or pass --source with the path of examples/demo/etl-craft"
    )


def run_demo(request: DemoRequest, observer: DemoObserver | None = None) -> DemoReport:
    observer = observer or DemoObserver()
    started = time.monotonic()
    folder = request.folder.resolve()
    project = prepare_folder(request.source or demo_source(), folder)
    observer.step(f"project in {project}")
    ctx = build_context(ContextRequest(project / CONNECTOR_FILE, request.profile, folder))
    try:
        init_db(ctx)
        migrate(ctx)
        observer.step(f"Engine DB {safe_url(ctx.engine.url)} is up to date")
        batch = write_next_batch(folder / SOURCES_FOLDER)
        observer.step(f"batch {batch.batch} written to {batch.folder}")
        runs = tuple(_run(ctx, code, batch.batch, observer) for code in PIPELINES)
        layers = count_layers(ctx.connector.warehouse) if ctx.connector else ()
        return DemoReport(
            folder=folder,
            project_folder=project,
            profile=request.profile,
            engine_db=safe_url(ctx.engine.url),
            batch=batch,
            runs=runs,
            layers=layers,
            seconds=time.monotonic() - started,
            next_steps=next_steps(folder, request, runs),
        )
    finally:
        ctx.close()


def prepare_folder(source: Path, folder: Path) -> Path:
    """The working folder's project: the demo's files copied in, missing ones only."""
    if folder.exists() and not folder.is_dir():
        raise UsageError(
            f"{folder} is a file; expected a folder for the demo: pass another --folder"
        )
    project = folder / PROJECT_FOLDER
    # Files already there are kept: an applied migration must never change under the Engine DB.
    shutil.copytree(source, project, ignore=_NOT_COPIED, dirs_exist_ok=True, copy_function=_keep)
    return project


def _keep(source: str, target: str) -> object:
    return target if Path(target).exists() else shutil.copy2(source, target)


def _run(ctx: OperationContext, pipeline_code: str, batch: int, observer: DemoObserver) -> RunView:
    run_key = f"demo:batch-{batch}:{uuid.uuid4().hex[:8]}"
    started = time.monotonic()
    watcher = RunWatcher(
        ctx,
        lambda view: observer.progress(view, time.monotonic() - started),
        pipeline_code=pipeline_code,
        run_key=run_key,
    )
    with watcher:
        found = request_run(ctx, RunRequest(pipeline_code, run_key=run_key))
    if isinstance(found, PausedPipeline):
        raise RunStateError(found.message)
    view = found
    observer.finished(view, time.monotonic() - started)
    return view


def next_steps(folder: Path, request: DemoRequest, runs: tuple[RunView, ...]) -> tuple[str, ...]:
    """Commands to try, from inside the working folder (where etl-craft finds the project)."""
    cli = request.program
    if request.profile is not None:
        cli += f" --profile {request.profile}"
    transform = next((run for run in runs if run.pipeline_code == "si_transform"), None)
    run_id = f" --run {transform.run_id}" if transform else ""
    return (
        f"cd {shlex.quote(str(folder))}",
        f"{cli} status --pipeline si_transform{run_id}",
        f"{cli} explain --pipeline si_transform --task notify_failure{run_id}",
        f"{cli} history --pipeline si_client_gamma",
        f"{cli} demo --folder .",
        f"{cli} server",
        f"{cli} token create --name me --role operator && {cli} ui",
        f"{cli} token create --name scripts --role admin && {cli} api",
    )
