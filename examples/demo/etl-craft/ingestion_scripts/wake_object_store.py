"""Gamma's object store answers the first request of a run with an error, then works.

The demo's flaky source: the first attempt of each task run leaves a marker and fails, the
retry (RETRIES = 1, RETRY_DELAY_SECONDS = 0) finds the marker, removes it and succeeds. It
reports how many objects wait in the bucket, which land_gamma reads after it.
"""

from pathlib import Path

from etl_craft.scripting import ScriptContext, ScriptResult

PROJECT = Path(__file__).resolve().parents[1]


def run(context: ScriptContext) -> ScriptResult:
    bucket = PROJECT / context.input_params["folder"]
    bucket.mkdir(parents=True, exist_ok=True)
    marker = bucket / f".waking-{context.task_run_id}"
    if not marker.exists():
        marker.touch()
        raise ConnectionError(f"the object store at {bucket} is waking up; try again")
    marker.unlink()
    objects = len(list(bucket.glob("*.csv.gz")))
    context.log.info("the object store is awake and holds %d object(s)", objects)
    return ScriptResult(row_count=objects)
