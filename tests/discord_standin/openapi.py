"""Discord's published OpenAPI description, used to check what crosses the stand-in.

Every request body the bot sends is validated against the request schema of the
operation it reaches (``spec/openapi.json.gz``, pinned; see ``spec/README.md``),
and every success response the stand-in gives is validated against the
operation's response schema, so the stand-in cannot drift from Discord's shapes
either. Error bodies are not validated: the spec's error schema types field
codes as integers, Discord sends strings (``BASE_TYPE_MAX_LENGTH``).

A mismatch is described by the operation (``POST
/interactions/{interaction_id}/{interaction_token}/callback``), the place in the
body (``$.data.embeds[0].title``) and the schema path that refused it, which is
what a test failure shows.
"""

from __future__ import annotations

import functools
import gzip
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from jsonschema.exceptions import ValidationError, best_match

__all__ = ["SPEC_FILE", "Operation", "SpecMismatch", "find_operation", "load_spec"]

SPEC_FILE = Path(__file__).with_name("spec") / "openapi.json.gz"
_URI = "urn:discord-api-spec"
_REQUEST_URI = "urn:discord-api-spec:requests"
_JSON = "application/json"


@dataclass(frozen=True)
class SpecMismatch:
    """One body the spec refuses: where in the body, which schema rule, and why."""

    operation: str
    what: str  # "request body" or "response 200"
    body_path: str
    schema_path: str
    message: str

    def __str__(self) -> str:
        return (
            f"{self.operation}: the {self.what} does not match Discord's OpenAPI description"
            f" at {self.body_path} (schema path {self.schema_path}): {self.message}"
        )


@dataclass(frozen=True)
class Operation:
    """One method on one path of the spec, with its compiled validators."""

    method: str
    template: str  # "/channels/{channel_id}/messages"
    operation_id: str
    pointer: str  # JSON pointer of the operation object in the spec
    request_schema: str | None  # pointer of the JSON request body schema
    response_schemas: tuple[tuple[str, str], ...]  # (status, pointer) of JSON success bodies

    @property
    def name(self) -> str:
        return f"{self.method} {self.template}"

    def check_request(self, body: Any) -> SpecMismatch | None:
        if self.request_schema is None:
            return None
        return _check(self, "request body", self.request_schema, body, _REQUEST_URI)

    def check_response(self, status: int, body: Any) -> SpecMismatch | None:
        for code, pointer in self.response_schemas:
            if code == str(status):
                return _check(self, f"response {status}", pointer, body, _URI)
        return None


class _Spec:
    def __init__(self, document: dict[str, Any]) -> None:
        draft = referencing.jsonschema.DRAFT202012
        # Requests: Discord also takes a snowflake as a JSON integer, and discord.py sends
        # some that way (attachment ids, message_reference); the spec only says string.
        # Responses keep the spec's strings: Discord always sends strings.
        lenient = dict(document)
        schemas = dict(document["components"]["schemas"])
        schemas["SnowflakeType"] = {
            "anyOf": [schemas["SnowflakeType"], {"type": "integer", "minimum": 0}]
        }
        lenient["components"] = {**document["components"], "schemas": schemas}
        self.registry: referencing.Registry = referencing.Registry().with_resources(
            [
                (_URI, referencing.Resource.from_contents(document, default_specification=draft)),
                (
                    _REQUEST_URI,
                    referencing.Resource.from_contents(lenient, default_specification=draft),
                ),
            ]
        )
        self.operations: list[tuple[re.Pattern[str], Operation]] = []
        for template, item in document["paths"].items():
            pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")
            for method, operation in item.items():
                if method == "parameters":
                    continue
                pointer = f"/paths/{_escape(template)}/{method}"
                request = None
                content = (operation.get("requestBody") or {}).get("content") or {}
                if _JSON in content:
                    request = f"{pointer}/requestBody/content/{_escape(_JSON)}/schema"
                responses = []
                for status, response in (operation.get("responses") or {}).items():
                    if not status.startswith("2") or "$ref" in response:
                        continue
                    if _JSON in (response.get("content") or {}):
                        schema = f"{pointer}/responses/{status}/content/{_escape(_JSON)}/schema"
                        responses.append((status, schema))
                op = Operation(
                    method.upper(),
                    template,
                    operation.get("operationId", ""),
                    pointer,
                    request,
                    tuple(responses),
                )
                self.operations.append((pattern, op))
        # A literal segment beats a parameter: ".../messages/@original" before ".../{message_id}".
        self.operations.sort(key=lambda pair: pair[1].template.count("{"))

    def find(self, method: str, path: str) -> Operation | None:
        method = method.upper()
        for pattern, operation in self.operations:
            if operation.method == method and pattern.match(path):
                return operation
        return None

    @functools.cache  # noqa: B019 - one spec object per process, validators built once
    def validator(self, uri: str, pointer: str) -> jsonschema.protocols.Validator:
        schema = {"$ref": f"{uri}#{pointer}"}
        return jsonschema.Draft202012Validator(schema, registry=self.registry)


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


@functools.cache
def _spec() -> _Spec:
    return _Spec(load_spec())


def load_spec() -> dict[str, Any]:
    """The pinned OpenAPI document, parsed."""
    with gzip.open(SPEC_FILE, "rt", encoding="utf-8") as handle:
        return json.load(handle)


def find_operation(method: str, path: str) -> Operation | None:
    """The spec's operation for ``method`` on ``path`` (below ``/api/v10``), if any."""
    return _spec().find(method, path)


def _meant(error: ValidationError) -> ValidationError:
    """Inside unions (anyOf, oneOf), the failure of the branch the body meant.

    A branch refused at its discriminator (``type`` is 4, not 8) or for being
    another kind of value (null, not an object) was not meant; of the others, the
    one that got deepest into the body was.
    """
    while error.context:
        depth = len(error.absolute_path)
        branches: dict[Any, list[ValidationError]] = {}
        for child in error.context:
            branches.setdefault(child.relative_schema_path[0], []).append(child)

        def score(errors: list[ValidationError], depth: int = depth) -> tuple[bool, int]:
            shallow = any(
                e.validator in ("type", "enum", "const") and len(e.absolute_path) <= depth + 1
                for e in errors
            )
            return not shallow, max(len(e.absolute_path) for e in errors)

        chosen = max(branches.values(), key=score)
        error = best_match(chosen) or chosen[0]
    return error


def _check(
    operation: Operation, what: str, pointer: str, body: Any, uri: str
) -> SpecMismatch | None:
    validator = _spec().validator(uri, pointer)
    error = best_match(validator.iter_errors(body))
    if error is None:
        return None
    error = _meant(error)
    schema_path = "/".join(str(p) for p in error.absolute_schema_path)
    message = error.message if len(error.message) <= 300 else error.message[:297] + "..."
    return SpecMismatch(operation.name, what, error.json_path, schema_path, message)
