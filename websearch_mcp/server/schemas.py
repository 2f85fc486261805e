"""JSON Schemas made flat: every reference inlined, every union with null written as a list of
types, so that no `$ref`, `$defs`, `anyOf`, `oneOf` or `allOf` is left. Clients refuse or strip
these in tool schemas; what a flat schema accepts is what the original accepts."""

from __future__ import annotations

from typing import Any

_DEFS = "#/$defs/"


def flat_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with its `$defs` inlined where referenced and `anyOf: [T, null]` made
    `type: [T, "null"]`; `ValueError` for any other union or an intersection, which have no
    flat form."""
    return _flat(schema, schema.get("$defs", {}))


def _flat(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in node:
        ref = node["$ref"]
        if not ref.startswith(_DEFS) or ref.removeprefix(_DEFS) not in defs:
            raise ValueError(f"cannot inline the reference {ref!r}")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return _flat({**defs[ref.removeprefix(_DEFS)], **siblings}, defs)
    if "anyOf" in node:
        siblings = {k: v for k, v in node.items() if k != "anyOf"}
        return _flat({**_or_null(node["anyOf"], defs), **siblings}, defs)
    if "oneOf" in node or "allOf" in node:
        raise ValueError("oneOf and allOf have no flat form")
    flat = {k: v for k, v in node.items() if k != "$defs"}
    if isinstance(properties := flat.get("properties"), dict):
        flat["properties"] = {name: _flat(value, defs) for name, value in properties.items()}
    for key in ("items", "additionalProperties"):
        if isinstance(value := flat.get(key), dict):
            flat[key] = _flat(value, defs)
    return flat


def _or_null(variants: list[dict[str, Any]], defs: dict[str, Any]) -> dict[str, Any]:
    """One schema that accepts what `variants`, a schema and null, accept."""
    others = [v for v in variants if v != {"type": "null"}]
    if len(others) != 1 or len(variants) != 2:
        raise ValueError("only a union of one schema and null has a flat form")
    only = _flat(others[0], defs)
    kind = only.get("type")
    if kind is None:  # accepts anything, null included
        return only
    return {**only, "type": [*(kind if isinstance(kind, list) else [kind]), "null"]}
