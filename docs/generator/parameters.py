"""The task parameter reference, from the declarations each handler reads its parameters by."""

from __future__ import annotations

from docs.generator.markdown import code, header, page, table

from etl_craft.core.enums import Handler
from etl_craft.handlers.parameters import (
    ALERT_TOKENS,
    COMMON_PARAMETERS,
    ParameterDeclaration,
    ParameterType,
    declarations_for,
)
from etl_craft.handlers.sql.tokens import SWITCHED, TOKEN_DESCRIPTIONS

SOURCE = "etl_craft.handlers.parameters and etl_craft.handlers.sql.parameters"
INTRO = (
    "A task's parameters are rows of `CFG_TASK_PARAMETERS` (`PARAMETER_NAME`, "
    "`PARAMETER_VALUE`), written by a project migration. `etl-craft validate` checks each task "
    "against this list: a required parameter that is missing or a value of the wrong form "
    "fails, a name its handler does not read is a warning. Values are text; Y/N flags are "
    "`Y` or `N`."
)
TYPES: dict[ParameterType, str] = {
    ParameterType.TEXT: "text",
    ParameterType.CHOICE: "one of",
    ParameterType.FLAG: "`Y` or `N`",
    ParameterType.COLUMNS: "column names, separated by commas",
    ParameterType.SQL: "one SELECT",
    ParameterType.PATH: "a path in the project",
}


def render() -> str:
    lines = header("Task parameters", SOURCE, INTRO)
    lines += ["## Every handler", "", *_table(COMMON_PARAMETERS)]
    common = {declaration.name for declaration in COMMON_PARAMETERS}
    for handler in Handler:
        own = tuple(d for d in declarations_for(handler) if d.name not in common)
        lines += [f"## {handler}", "", *_table(own)]
    lines += [
        "## SQL tokens",
        "",
        "A SQL task's SELECT may use these tokens; they are replaced outside string literals, "
        "quoted names and comments, each value as a literal of the warehouse's dialect:",
        "",
    ]
    lines += table(
        ("token", "value", "replaced"),
        (
            (
                code(f"$${name}"),
                text,
                f"with {SWITCHED[name]} = Y" if name in SWITCHED else "always",
            )
            for name, text in TOKEN_DESCRIPTIONS.items()
        ),
    )
    lines += [
        "## Alert template tokens",
        "",
        "`SUBJECT` and `BODY` of an EMAIL_ALERT task are Python format strings over these "
        "fields; `{{` and `}}` write a literal brace.",
        "",
    ]
    lines += table(("field", "value"), ((code(f"{{{k}}}"), v) for k, v in ALERT_TOKENS.items()))
    return page(lines)


def _table(declarations: tuple[ParameterDeclaration, ...]) -> list[str]:
    rows = (
        (
            code(d.name),
            _form(d),
            "yes" if d.required else "",
            code(d.default or ""),
            d.description,
        )
        for d in declarations
    )
    return table(("parameter", "value", "required", "default", "description"), rows)


def _form(declaration: ParameterDeclaration) -> str:
    if declaration.type is ParameterType.CHOICE:
        return "one of " + ", ".join(code(choice) for choice in declaration.choices)
    return TYPES[declaration.type]
