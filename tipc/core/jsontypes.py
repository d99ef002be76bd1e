"""What parsed JSON (or YAML) holds, as types: values read from a report, a record or a worker's reply are
narrowed (isinstance, or the helpers here) before use, never trusted unchecked."""

from __future__ import annotations

from typing import TypeAlias

JSONValue: TypeAlias = "str | int | float | bool | list[JSONValue] | dict[str, JSONValue] | None"
JSONObject: TypeAlias = "dict[str, JSONValue]"


def as_object(value: object) -> JSONObject:
    """The value when it is a JSON object, else an empty one (a missing or malformed field)."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[JSONValue]:
    """The value when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def objects(value: object) -> list[JSONObject]:
    """The JSON objects of an array (other items and a non-array give none)."""
    return [v for v in as_list(value) if isinstance(v, dict)]
