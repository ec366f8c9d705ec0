"""Scripts load as real modules: dataclasses, future annotations, pickle, Enum, type hints."""

from __future__ import annotations

import io
import logging
import pickle
import sys
import typing
from datetime import date
from pathlib import Path
from textwrap import dedent

import pytest

from etl_craft.core.errors import MetadataError, ScriptError
from etl_craft.core.redaction import Redactor
from etl_craft.handlers.scripts import load_script, module_name, run_script
from etl_craft.scripting import ScriptContext

FEATURES = dedent(
    """
    from __future__ import annotations

    import dataclasses
    import enum
    import pickle
    import typing

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass(frozen=True)
    class Row:
        key: int
        colour: Colour
        note: str | None = None

    ROUND_TRIP = pickle.loads(pickle.dumps(Row(1, Colour.RED)))
    HINTS = typing.get_type_hints(Row)
    """
)


def write(folder: Path, relative: str, source: str) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


def test_module_features_work_while_loading_and_after(tmp_path: Path) -> None:
    write(tmp_path, "crm/features.py", FEATURES)
    module = load_script(tmp_path, "crm/features.py")
    name = module_name("crm/features.py")
    assert module.__name__ == name
    assert sys.modules[name] is module
    assert module.__spec__ is not None
    assert module.__spec__.origin == str(tmp_path / "crm" / "features.py")
    row = module.Row(2, module.Colour.RED)
    assert module.Row(1, module.Colour.RED) == module.ROUND_TRIP
    assert pickle.loads(pickle.dumps(row)) == row
    assert pickle.loads(pickle.dumps(module.Colour.RED)) is module.Colour.RED
    assert {"key": int, "colour": module.Colour, "note": str | None} == module.HINTS
    assert typing.get_type_hints(module.Row)["colour"] is module.Colour


def test_a_plain_dataclass_without_future_annotations(tmp_path: Path) -> None:
    # The loader's own `from __future__ import annotations` must not leak into the script.
    write(tmp_path, "plain.py", "import dataclasses\n@dataclasses.dataclass\nclass A:\n  x: int\n")
    module = load_script(tmp_path, "plain.py")
    assert module.A.__annotations__ == {"x": int}


def test_a_script_failing_at_import_is_unregistered(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "raise RuntimeError('no config')\n")
    with pytest.raises(ScriptError, match="broken.py failed while loading: RuntimeError"):
        load_script(tmp_path, "broken.py")
    assert module_name("broken.py") not in sys.modules


@pytest.mark.parametrize("relative", ["../outside.py", "/etc/passwd", "missing.py", "notes.txt"])
def test_a_script_outside_the_folder_or_missing_is_refused(tmp_path: Path, relative: str) -> None:
    (tmp_path / "notes.txt").write_text("")
    with pytest.raises(MetadataError, match=f"SCRIPT {relative!r}"):
        load_script(tmp_path, relative)


def context() -> ScriptContext:
    return ScriptContext(
        offset=None,
        offset_type=None,
        input_params={"secret_token": "hunter22"},
        run_date=date(2026, 1, 1),
        pipeline_id=1,
        pipeline_run_id=2,
        task_id=3,
        task_run_id=4,
        attempt_id=5,
        log=logging.getLogger("etl_craft.script.test"),
    )


PRINTS = dedent(
    """
    import sys
    from etl_craft.scripting import ScriptResult

    def run(context):
        print("printed", context.input_params["secret_token"])
        sys.stderr.write("to stderr\\n")
        return ScriptResult(row_count=3)
    """
)


def test_stdout_and_stderr_are_captured_and_masked(tmp_path: Path) -> None:
    write(tmp_path, "prints.py", PRINTS)
    log = io.StringIO()
    outcome = run_script(tmp_path, "prints.py", context(), log=log, redactor=Redactor(["hunter22"]))
    text = log.getvalue()
    assert "printed ***" in text
    assert "to stderr" in text
    assert "hunter22" not in text
    assert (outcome.counts.source, outcome.counts.target, outcome.counts.inserted) == (3, 3, 3)


def test_a_raising_script_fails_with_its_traceback_in_the_log(tmp_path: Path) -> None:
    write(tmp_path, "fails.py", "def run(context):\n    raise ValueError('bad hunter22 row')\n")
    log = io.StringIO()
    with pytest.raises(ScriptError, match=r"fails.py raised ValueError: bad \*\*\* row") as excinfo:
        run_script(
            tmp_path,
            "fails.py",
            context(),
            log=log,
            redactor=Redactor(["hunter22"]),
            log_path=tmp_path / "fails.attempt-1.log",
        )
    assert f"see the attempt log {tmp_path / 'fails.attempt-1.log'} for its traceback" in str(
        excinfo.value
    )
    assert "Traceback" in log.getvalue()
    assert "hunter22" not in log.getvalue()


def test_a_script_without_run_is_refused(tmp_path: Path) -> None:
    write(tmp_path, "norun.py", "x = 1\n")
    with pytest.raises(ScriptError, match=r"no run\(context\) function"):
        run_script(tmp_path, "norun.py", context(), log=io.StringIO(), redactor=Redactor([]))
