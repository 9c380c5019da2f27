"""Answers in words from an OpenAI-compatible model server, citing the wiki.

Optional (off unless a model server is configured) and free of Discord:

- :mod:`~knowledge.llm.client`: streaming chat completions over httpx, every
  failure one :class:`LlmFailure` kind;
- :mod:`~knowledge.llm.prompt`: the confident-retrieval gate, the numbered sources
  and the messages (wording in ``templates/llm.yaml``), secrets redacted first;
- :mod:`~knowledge.llm.cite`: the answer held to its sources and made safe to show;
- :mod:`~knowledge.llm.ask`: :class:`Asker`, the three together, with recent outcomes;
- :mod:`~knowledge.llm.replies`: the outcome as a :class:`~knowledge.reply.Reply`.
"""

from knowledge.llm.ask import Asker, AskStats, Outcome, Plan
from knowledge.llm.cite import Checked, check_answer, leaks_prompt
from knowledge.llm.client import (
    FAILURE_KINDS,
    ChatClient,
    LlmFailure,
    LlmSettings,
    StreamStats,
    api_root,
)
from knowledge.llm.prompt import Retrieval, Source, build_messages, confident, retrieve
from knowledge.llm.replies import reply_of

__all__ = [
    "FAILURE_KINDS",
    "AskStats",
    "Asker",
    "ChatClient",
    "Checked",
    "LlmFailure",
    "LlmSettings",
    "Outcome",
    "Plan",
    "Retrieval",
    "Source",
    "StreamStats",
    "api_root",
    "build_messages",
    "check_answer",
    "confident",
    "leaks_prompt",
    "reply_of",
    "retrieve",
]
