"""OpenAI's published OpenAPI description, used to check what crosses the model stand-in.

Every request body the bot sends to ``POST /v1/chat/completions`` is validated against
``CreateChatCompletionRequest``, every chunk the stand-in streams against
``CreateChatCompletionStreamResponse``, and its model list against
``ListModelsResponse`` (``spec/openapi.json.gz``, pinned; see ``spec/README.md``).
"""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from jsonschema.exceptions import best_match

__all__ = ["SPEC_FILE", "check", "load_spec"]

SPEC_FILE = Path(__file__).with_name("spec") / "openapi.json.gz"
_URI = "urn:openai-openapi"


def load_spec() -> dict[str, Any]:
    with gzip.open(SPEC_FILE, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def _nullable(node: Any) -> Any:
    """OpenAPI 3.0's ``nullable: true`` as JSON Schema says it: "or null"."""
    if isinstance(node, list):
        return [_nullable(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _nullable(v) for k, v in node.items()}
    if out.pop("nullable", False) is True:
        if "$ref" in out:
            ref = out.pop("$ref")
            out["anyOf"] = [{"$ref": ref}, {"type": "null"}]
        elif isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        elif "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


@functools.cache
def _registry() -> referencing.Registry:
    document = _nullable(load_spec())
    resource = referencing.Resource.from_contents(
        document, default_specification=referencing.jsonschema.DRAFT202012
    )
    return referencing.Registry().with_resource(_URI, resource)


@functools.cache
def _validator(schema: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(
        {"$ref": f"{_URI}#/components/schemas/{schema}"}, registry=_registry()
    )


def check(schema: str, body: Any) -> str | None:
    """None when ``body`` matches ``components/schemas/<schema>``, else why not."""
    error = best_match(_validator(schema).iter_errors(body))
    if error is None:
        return None
    return f"{schema} at {error.json_path}: {error.message[:300]}"
