"""Run by a venv's python with Airflow: load a dags folder through DagBag, print what it built.

Never imports etl_craft or the tests: it sees only Airflow and the installed factory.
Usage: python airflow_probe.py DAGS_FOLDER  (prints one JSON document on stdout)
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(folder: str) -> None:
    try:
        from airflow.dag_processing.dagbag import DagBag
    except ImportError:  # Airflow 2
        from airflow.models import DagBag

    bag = DagBag(folder)
    document: dict[str, Any] = {
        "import_errors": {str(k): str(v) for k, v in bag.import_errors.items()},
        "dags": {dag_id: _dag(dag) for dag_id, dag in bag.dags.items()},
    }
    sys.stdout.write(json.dumps(document))


def _dag(dag: Any) -> dict[str, Any]:
    return {
        "max_active_runs": dag.max_active_runs,
        "catchup": dag.catchup,
        "tasks": {task.task_id: _task(task) for task in dag.tasks},
    }


def _task(task: Any) -> dict[str, Any]:
    found = {
        "operator": type(task).__name__,
        "trigger_rule": str(getattr(task.trigger_rule, "value", task.trigger_rule)),
        "upstream": sorted(task.upstream_task_ids),
    }
    for name in ("bash_command", "env", "external_dag_id", "external_task_id", "mode"):
        if hasattr(task, name):
            found[name] = getattr(task, name)
    for name in ("allowed_states", "failed_states"):
        if hasattr(task, name):
            found[name] = sorted(str(getattr(s, "value", s)) for s in getattr(task, name))
    return found


if __name__ == "__main__":
    main(sys.argv[1])
