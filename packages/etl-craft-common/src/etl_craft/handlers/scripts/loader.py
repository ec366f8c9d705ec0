"""Load an ingestion script as a real module, so the Python features scripts use just work.

dataclasses, pickle, typing.get_type_hints and Enum look a class's module up in sys.modules by
its __name__; a script executed into a bare namespace breaks all of them.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path, PurePosixPath
from types import ModuleType

from etl_craft.core.errors import MetadataError, ScriptError

MODULE_PREFIX = "etl_craft_script_"
SCRIPTS_FOLDER = "ingestion_scripts"


def module_name(relative: str) -> str:
    """A stable name per script path, so pickles made by one attempt load in the next."""
    return MODULE_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", relative)


def script_path(scripts_dir: Path, relative: str) -> Path:
    written = PurePosixPath(relative.replace("\\", "/"))
    if written.is_absolute() or ".." in written.parts or not written.parts:
        raise MetadataError(
            f"SCRIPT {relative!r} is not a path inside {SCRIPTS_FOLDER}/; expected a relative "
            f"path such as crm/contacts.py under {scripts_dir}"
        )
    path = scripts_dir.joinpath(*written.parts)
    if path.suffix != ".py" or not path.is_file():
        raise MetadataError(
            f"SCRIPT {relative!r} names {path}, which is not a .py file; expected a script "
            f"under {scripts_dir}: check the name or add the file"
        )
    return path


def load_script(scripts_dir: Path, relative: str) -> ModuleType:
    """Compile and execute the script as module etl_craft_script_<path>, registered first."""
    path = script_path(scripts_dir, relative)
    name = module_name(PurePosixPath(relative.replace("\\", "/")).as_posix())
    # dont_inherit: the loader's own `from __future__ import annotations` must not leak in.
    code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before execution: a dataclass body looks its own module up while it runs.
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the project's script is the point
    except Exception as error:
        sys.modules.pop(name, None)
        raise ScriptError(
            f"script {relative} failed while loading: {type(error).__name__}: {error}; fix the "
            f"module-level code of {path}"
        ) from error
    return module
