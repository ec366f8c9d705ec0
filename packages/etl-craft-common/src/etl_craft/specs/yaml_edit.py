"""Set one value in a spec file's text, leaving its comments and layout as they were written.

The document is composed, not loaded, so that each node keeps its place in the text: a value's
own characters are replaced, or a ``key: value`` line is added to the block mapping that lacks
the key. What can't be changed that way (a block scalar, a block list or mapping, a flow
mapping that lacks the key) is left to the person: ``set_value`` returns None.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

KeyPath = tuple[str, ...]
YamlValue = str | int | bool | None | Mapping[str, object]
# Characters that end or split a plain scalar inside a flow mapping such as {a: 1, b: 2}.
_FLOW_INDICATORS = frozenset(",[]{}#")
_INT_TAG = "tag:yaml.org,2002:int"


def set_value(text: str, paths: Sequence[KeyPath], value: YamlValue) -> str | None:
    """``text`` with ``value`` at the first of ``paths`` the document holds, or added under the
    first whose parent is a block mapping; None when neither can be done in place."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    for path in paths:
        node = _walk(root, path)
        if node is not None:
            return _replaced(text, node, value)
    for path in paths:
        parent = _walk(root, path[:-1])
        if isinstance(parent, MappingNode) and not parent.flow_style and parent.value:
            return _inserted(text, parent, f"{path[-1]}: {render(value)}")
    return None


def render(value: YamlValue) -> str:
    """``value`` as one line of YAML that reads back as the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False)
    return value if _plain(value) else json.dumps(value, ensure_ascii=False)


def _plain(text: str) -> bool:
    if not text or text != text.strip() or _FLOW_INDICATORS & set(text):
        return False
    try:
        return bool(yaml.safe_load(text) == text)
    except yaml.YAMLError:
        return False


def _whole(text: str) -> bool:
    return text.lstrip("-").isdigit() and str(int(text)) == text


def _walk(root: Node | None, path: KeyPath) -> Node | None:
    node = root
    for key in path:
        if not isinstance(node, MappingNode):
            return None
        node = next(
            (v for k, v in node.value if isinstance(k, ScalarNode) and k.value == key), None
        )
    return node


def _replaced(text: str, node: Node, value: YamlValue) -> str | None:
    style = node.style if isinstance(node, ScalarNode) else None
    scalar = isinstance(node, ScalarNode) and style in (None, "'", '"')
    flow = isinstance(node, MappingNode | SequenceNode) and node.flow_style
    if not (scalar or flow) or (flow and not isinstance(value, Mapping)):
        return None
    if isinstance(value, str) and style is None and node.tag == _INT_TAG and _whole(value):
        rendered = value  # a number written plain stays plain, as the text of a parameter
    elif isinstance(value, str) and style is not None:
        # A value written quoted stays quoted: "Y" reads as a flag to some YAML readers.
        rendered = json.dumps(value, ensure_ascii=False)
    else:
        rendered = render(value)
    return text[: node.start_mark.index] + rendered + text[node.end_mark.index :]


def _inserted(text: str, mapping: MappingNode, line: str) -> str:
    """Add ``line`` after the mapping's leading run of one-line values (its settings, before
    any nested block such as tasks:), at the indentation of its keys."""
    first_key = mapping.value[0][0]
    indent = " " * first_key.start_mark.column
    nested = [i for i, (_, v) in enumerate(mapping.value) if not _one_line(v)]
    run = nested[0] if nested else len(mapping.value)
    if run == 0:
        at = first_key.start_mark.index - first_key.start_mark.column
    else:
        end = mapping.value[run - 1][1].end_mark.index
        newline = text.find("\n", end)
        if newline < 0:
            return f"{text}\n{indent}{line}\n"
        at = newline + 1
    return f"{text[:at]}{indent}{line}\n{text[at:]}"


def _one_line(node: Node) -> bool:
    return node.start_mark.line == node.end_mark.line
