"""``/ask`` in the terminal: ``--llm-url URL --llm-model NAME`` on ``ask`` and ``console``.

``wikibot ask --llm-url http://gpu-box:8000/v1 --llm-model NAME "/ask QUESTION"`` prints
the answer with its cited sections (``--json``: the reply with ``meta.cited`` as
``path#anchor``, ``meta.given`` the sections sent, ``meta.timings_ms``). Without a
URL, ``/ask`` says answering is off. The key, if the server wants one, comes from the
environment variable ``--llm-key-env`` names (never from the command line).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import TYPE_CHECKING

from knowledge.templates import load_templates

if TYPE_CHECKING:  # imported when used: the parser (and ``wikibot health``) stays light
    from knowledge.llm import LlmSettings
    from knowledge.reply import Reply
    from knowledge.service import KnowledgeBase

__all__ = ["add_llm_options", "ask_reply", "llm_settings"]


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--llm-url", help="an OpenAI-compatible server for /ask, e.g. http://gpu-box:8000/v1"
    )
    parser.add_argument("--llm-model", help="the model's id as the server's /v1/models lists it")
    parser.add_argument(
        "--llm-key-env",
        metavar="VAR",
        help="the environment variable holding the server's API key, if it needs one",
    )
    parser.add_argument(
        "--llm-timeout", type=float, default=90.0, help="seconds for a whole answer (default 90)"
    )


def llm_settings(args: argparse.Namespace) -> LlmSettings | None:
    """The server named on the command line, or None (``/ask`` is then off)."""
    url = getattr(args, "llm_url", None)
    if not url:
        return None
    from knowledge.llm import LlmSettings

    if not args.llm_model:
        raise SystemExit("--llm-url needs --llm-model NAME (the id /v1/models lists)")
    key = os.environ.get(args.llm_key_env, "").strip() if args.llm_key_env else ""
    return LlmSettings(
        url,
        args.llm_model,
        key or None,
        total_timeout=args.llm_timeout,
        first_token_timeout=args.llm_timeout,
        idle_timeout=min(60.0, args.llm_timeout),
    )


def ask_reply(kb: KnowledgeBase, question: str, settings: LlmSettings | None) -> Reply:
    """``/ask QUESTION`` answered to its end (the terminal waits for the whole answer)."""
    from knowledge.llm import Asker, reply_of
    from knowledge.llm.replies import empty_reply, off_reply

    t = load_templates("llm.yaml")
    if settings is None:
        return off_reply(t)
    if not question.strip():
        return empty_reply(t)
    state = kb.state

    async def run() -> Reply:
        asker = Asker(settings, max_concurrent=1, templates=t)
        try:
            outcome = await asker.answer(state, asker.plan(state, question))
        finally:
            await asker.aclose()
        return reply_of(state, t, outcome)

    return asyncio.run(run())
