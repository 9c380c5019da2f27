"""One question answered in words: retrieval, the gate, the stream, the checks.

:class:`Asker` holds one :class:`~knowledge.llm.client.ChatClient` and what went on
lately (:class:`AskStats`). :meth:`Asker.plan` ranks the wiki and builds the prompt
(synchronous, bounded work on what is in memory); :meth:`Asker.answer` streams the
model's text, calling ``on_text`` with the checked text so far, and returns an
:class:`Outcome` whatever happens: ``answered``, ``declined`` (the ranking was not
sure: no model was asked) or ``fallback`` with the reason (a failure kind of
:data:`~knowledge.llm.client.FAILURE_KINDS`, ``uncited``, ``leaked`` or ``full``).
Nothing here knows Discord.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx

from knowledge.answers._state import WikiState
from knowledge.llm.cite import Checked, check_answer
from knowledge.llm.client import ChatClient, LlmFailure, LlmSettings, StreamStats
from knowledge.llm.prompt import Retrieval, build_messages, confident, retrieve
from knowledge.templates import Templates, load_templates
from knowledge.triage.redact import redact

__all__ = ["OUTCOME_REASONS", "AskStats", "Asker", "Outcome", "Plan"]

log = logging.getLogger(__name__)

#: Why an answer fell back to the pages, besides the client's failure kinds: it cited
#: nothing it was given (uncited), it repeated the system prompt (leaked), or as many
#: questions as allowed were already with the server (full), or it was stopped because
#: nobody was left to read it (cancelled).
OUTCOME_REASONS = ("uncited", "leaked", "full", "cancelled")
#: Outcomes remembered for ``/wiki status``.
_RECENT = 50


@dataclass(frozen=True, slots=True)
class Plan:
    """A question made ready: what was retrieved and, if it is confident, the messages."""

    retrieval: Retrieval
    messages: tuple[dict[str, str], ...]

    @property
    def ask(self) -> bool:
        return bool(self.messages)


@dataclass(frozen=True, slots=True)
class Outcome:
    status: str  # answered, declined, fallback
    plan: Plan
    checked: Checked | None = None
    reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    #: What the model wrote, redacted, unchecked: for ``--json`` and evaluation only.
    model_text: str = ""


@dataclass(slots=True)
class AskStats:
    """Counts since start and the last outcomes, for ``/wiki status``."""

    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    recent: collections.deque[tuple[float, str, str | None, float]] = field(
        default_factory=lambda: collections.deque(maxlen=_RECENT)
    )
    last_failure: tuple[float, str] | None = None

    def note(self, outcome: Outcome) -> None:
        key = outcome.status if outcome.reason is None else f"{outcome.status}:{outcome.reason}"
        self.counts[key] += 1
        self.recent.append(
            (time.time(), outcome.status, outcome.reason, outcome.timings.get("total", 0.0))
        )
        if outcome.status == "fallback" and outcome.reason is not None:
            self.last_failure = (time.time(), outcome.reason)

    def summary(self) -> dict[str, object]:
        recent = list(self.recent)
        answered = [r for r in recent if r[1] == "answered"]
        times = sorted(r[3] for r in answered)
        return {
            "asked": sum(self.counts.values()),
            "recent": len(recent),
            "answered": len(answered),
            "declined": sum(1 for r in recent if r[1] == "declined"),
            "fallback": sum(1 for r in recent if r[1] == "fallback"),
            "median_seconds": times[len(times) // 2] if times else None,
            "last_failure": self.last_failure,
        }


class Asker:
    """Answers questions from the wiki with one model server."""

    def __init__(
        self,
        settings: LlmSettings,
        *,
        max_concurrent: int = 4,
        templates: Templates | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.settings = settings
        self.t = templates or load_templates("llm.yaml")
        self.client = ChatClient(settings, transport=transport)
        self.stats = AskStats()
        self.max_concurrent = max_concurrent
        self._in_flight = 0

    async def aclose(self) -> None:
        await self.client.aclose()

    def plan(
        self, state: WikiState, question: str, context: Mapping[str, str] | None = None
    ) -> Plan:
        """Rank the wiki for ``question`` and, when the ranking is sure, build the prompt."""
        retrieval = retrieve(state, question, context)
        if not confident(retrieval):
            return Plan(retrieval, ())
        return Plan(retrieval, tuple(build_messages(self.t, retrieval)))

    def check(self, state: WikiState, plan: Plan, text: str) -> Checked:
        return check_answer(
            text,
            plan.retrieval.sources,
            wiki_url=state.links.url,
            wiki_base=state.links.base,
            link_removed=self.t("llm.link_removed"),
            system_prompt=self.t("llm.system"),
            limit=self.settings.max_chars,
        )

    async def answer(
        self,
        state: WikiState,
        plan: Plan,
        on_text: Callable[[str], object] | None = None,
    ) -> Outcome:
        """Stream the model's answer to ``plan`` and return how it ended. ``on_text`` is
        called with the model's raw text so far after each piece: cheap, so that a
        caller shows it at its own pace, through :meth:`check` (a few milliseconds on a
        long answer: done per piece, twenty streams would keep an event loop busy).
        Cancelling the task closes the connection to the server."""
        started = time.perf_counter()
        timings = {"retrieval": plan.retrieval.seconds}
        if not plan.ask:
            outcome = Outcome("declined", plan, timings=timings)
            self.stats.note(outcome)
            return outcome
        if self._in_flight >= self.max_concurrent:
            outcome = Outcome("fallback", plan, reason="full", timings=timings)
            self.stats.note(outcome)
            return outcome
        self._in_flight += 1
        stats = StreamStats()
        text = ""
        try:
            async for piece in self.client.stream(plan.messages, stats):
                text += piece
                if on_text is not None:
                    on_text(text)
        except asyncio.CancelledError:
            self.stats.note(
                Outcome(
                    "fallback", plan, reason="cancelled", timings=_timings(timings, stats, started)
                )
            )
            raise
        except LlmFailure as exc:
            log.info("model server: %s", exc)
            outcome = Outcome(
                "fallback", plan, reason=exc.kind, timings=_timings(timings, stats, started)
            )
            self.stats.note(outcome)
            return outcome
        finally:
            self._in_flight -= 1
        checked = self.check(state, plan, text)
        reason = None if checked.answer else ("leaked" if checked.leaked else "uncited")
        outcome = Outcome(
            "answered" if reason is None else "fallback",
            plan,
            checked,
            reason,
            _timings(timings, stats, started),
            dict(stats.usage),
            stats.finish_reason,
            redact(text[: self.settings.max_chars], "answer").text,
        )
        self.stats.note(outcome)
        return outcome

    async def models(self) -> list[str]:
        return await self.client.models()


def _timings(timings: dict[str, float], stats: StreamStats, started: float) -> dict[str, float]:
    out = dict(timings)
    if stats.first_text:
        out["first_token"] = stats.first_text - started
    out["total"] = time.perf_counter() - started
    return out
