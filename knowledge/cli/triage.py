"""``wikibot triage``: check a help request against the wiki from the command line.

    wikibot triage [--wiki DIR] [--data DIR] [--json] [request.yaml|request.json|-]
                   [--text TEXT] [--command FILE] [--log FILE] [--client FILE]
                   [--image IMAGE] [--model-page PAGE] [--gpus LAYOUT] [--settings TP/DCP]

The request file is a YAML or JSON mapping with the fields of
:class:`~knowledge.triage.engine.TriageRequest` (or the labels of the wiki's question
template); flags override the file's fields. ``FILE`` arguments may be ``-`` for
standard input (once). Error messages name the file and the line, never its text:
a request may hold secrets, and only the redacted result is printed.

The triage engine is imported when the command runs, not when the ``wikibot``
parser is built, so ``wikibot ask`` does not pay for loading it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping
from typing import Any, Final

import yaml

from knowledge.cli.options import add_wiki_options, open_knowledge
from knowledge.templates import load_templates

__all__ = ["MAX_REQUEST_BYTES", "add_triage_command", "read_request"]

log = logging.getLogger(__name__)

#: Largest request file read (a YAML/JSON file holding a log of a few MB).
MAX_REQUEST_BYTES: Final = 24 * 1024 * 1024

#: flag dest -> (request field, the flag names a file)
_FLAG_FIELDS: Final = (
    ("text", "text", False),
    ("expected", "expected", False),
    ("actual", "actual", False),
    ("image", "image", False),
    ("model_page", "model_page", False),
    ("gpus", "gpus", False),
    ("settings", "settings", False),
    ("command_file", "command", True),
    ("log_file", "log", True),
    ("client_file", "client", True),
)


class RequestError(Exception):
    """A request that cannot be read; the message is safe to print."""


def _read_bytes(path: str, limit: int, *, keep_end: bool, stdin_used: list[bool]) -> bytes:
    if path == "-":
        if stdin_used[0]:
            raise RequestError("standard input can be read only once")
        stdin_used[0] = True
        data = sys.stdin.buffer.read(limit + 1)
        return data[:limit]
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            if size > limit and keep_end:
                fh.seek(size - limit)
            else:
                fh.seek(0)
            return fh.read(limit)
    except OSError as exc:
        raise RequestError(f"cannot read {path}: {exc.strerror or type(exc).__name__}") from None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace").lstrip("\ufeff")


def _load_mapping(path: str, text: str) -> Mapping[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)  # a safe loader: plain data only
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise RequestError(f"{path} is not valid YAML or JSON{where}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise RequestError(f"{path} must hold a mapping of request fields")
    return data


def read_request(args: argparse.Namespace) -> dict[str, Any]:
    """The request from the file named on the command line, overridden by flags."""
    from knowledge.triage.engine import MAX_FIELD_CHARS, MAX_LOG_CHARS

    stdin_used = [False]
    request: dict[str, Any] = {}
    if args.request:
        raw = _read_bytes(args.request, MAX_REQUEST_BYTES, keep_end=False, stdin_used=stdin_used)
        request.update(_load_mapping(args.request, _decode(raw)))
    for dest, field, is_file in _FLAG_FIELDS:
        value = getattr(args, dest, None)
        if value is None:
            continue
        if is_file:
            limit = MAX_LOG_CHARS if field == "log" else MAX_FIELD_CHARS
            value = _decode(
                _read_bytes(value, limit, keep_end=field == "log", stdin_used=stdin_used)
            )
        request[field] = value
    if not any(str(v).strip() for v in request.values() if v is not None):
        raise RequestError("nothing to triage: give a request file or --text/--log/--command ...")
    return request


def _triage(args: argparse.Namespace) -> int:
    from knowledge.triage.engine import TriageContext, render_text

    try:
        request = read_request(args)
    except RequestError as exc:
        print(f"wikibot triage: {exc}", file=sys.stderr)
        return 2
    kb = open_knowledge(args, load_templates())
    try:
        context = TriageContext.from_kb(kb)
        result = context.run(request)
    finally:
        kb.close()
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        print(render_text(result, context.templates), end="")
    return 0


def add_triage_command(sub: argparse._SubParsersAction) -> None:
    """Register ``wikibot triage`` on the ``wikibot`` sub-command parser."""
    parser = sub.add_parser(
        "triage",
        help="check a help request (launch, logs, image ...) against the wiki",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    add_wiki_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument(
        "request", nargs="?", help="request file (YAML or JSON mapping of fields), or - for stdin"
    )
    parser.add_argument("--text", help="what you asked, saw, expected and tried")
    parser.add_argument("--expected", help="what you expected")
    parser.add_argument("--actual", help="what happened")
    parser.add_argument("--image", help="Docker image tag (and digest)")
    parser.add_argument("--model-page", dest="model_page", help="runbook or model page followed")
    parser.add_argument("--gpus", help="GPU layout, e.g. '8x RTX PRO 6000' or '0-3'")
    parser.add_argument("--settings", help="TP/DCP/MTP/DSpark settings, e.g. 'TP8 DCP4 MTP3'")
    parser.add_argument(
        "--command", dest="command_file", metavar="FILE", help="launch command or compose file"
    )
    parser.add_argument("--log", dest="log_file", metavar="FILE", help="server log")
    parser.add_argument(
        "--client", dest="client_file", metavar="FILE", help="client command and its output"
    )
    parser.set_defaults(func=_triage)
