"""``wikibot triage``: check a help request against the wiki from the command line.

    wikibot triage [--wiki DIR] [--data DIR] [--json] [request.yaml|request.json|-]
                   [--text TEXT] [--command FILE] [--log FILE] [--client FILE]
                   [--image IMAGE] [--model-page PAGE] [--gpus LAYOUT] [--settings TP/DCP]

The request file is a YAML or JSON mapping with the fields of
:class:`~knowledge.triage.request.TriageRequest` (or the labels of the wiki's question
template); flags override the file's fields. ``FILE`` arguments may be ``-`` for
standard input (once). Error messages name the file and the line, never its text:
a request may hold secrets, and only the redacted result is printed: as the reply
the console shows, or with ``--json`` as the result's data plus that reply
(``reply``).

The triage engine is imported when the command runs, not when the ``wikibot``
parser is built, so ``wikibot ask`` does not pay for loading it.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from knowledge.cli.options import add_wiki_options, open_knowledge
from knowledge.templates import load_templates

if TYPE_CHECKING:
    from knowledge.reply import Reply
    from knowledge.templates import Templates
    from knowledge.triage.request import RequestReader

#: Prints a reply as text, the way the console does (given by ``knowledge.cli.main``).
Render = Callable[["Reply", "Templates"], str]

__all__ = ["add_triage_command", "read_request"]

log = logging.getLogger(__name__)

#: Key of the request mapping that carries the log's ``LogPart`` (a value YAML never makes).
_LOG_PART_KEY: Final = "log_part"

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


def read_request(args: argparse.Namespace, reader: RequestReader | None = None) -> dict[str, Any]:
    """The request from the file named on the command line, overridden by flags."""
    from knowledge.triage.request import RequestError, RequestReader, field_limit

    reader = reader or RequestReader()
    request: dict[Any, Any] = reader.request_file(args.request) if args.request else {}
    for dest, field, is_file in _FLAG_FIELDS:
        value = getattr(args, dest, None)
        if value is None:
            continue
        if is_file and field == "log":
            value, part = reader.read_log(value, field_limit(field))
            request[_LOG_PART_KEY] = part  # line numbers as in the file, what part was read
        elif is_file:
            value = reader.read(value, field_limit(field))
        request[field] = value
    if not any(str(v).strip() for k, v in request.items() if v is not None and k != _LOG_PART_KEY):
        raise RequestError("nothing to triage: give a request file or --text/--log/--command ...")
    return request


def _triage(args: argparse.Namespace, render: Render) -> int:
    from knowledge.answers.triage import triage_reply
    from knowledge.triage.engine import triage
    from knowledge.triage.request import RequestError

    try:
        request = read_request(args)
    except RequestError as exc:
        print(f"wikibot triage: {exc}", file=sys.stderr)
        return 2
    kb = open_knowledge(args, load_templates())
    try:
        context = kb.triage_context
        result = triage(context, request)
    finally:
        kb.close()
    reply = triage_reply(result, context.templates)
    if args.json:
        data = result.to_json()
        data["reply"] = reply.to_json()
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        print(render(reply, kb.t))
    return 0


def add_triage_command(sub: argparse._SubParsersAction, render: Render) -> None:
    """Register ``wikibot triage`` on the ``wikibot`` sub-command parser; its text output
    is the reply as ``render`` prints it."""
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
    parser.set_defaults(func=functools.partial(_triage, render=render))
