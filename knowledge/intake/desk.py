"""The support desk: a draft filled step by step, checked against the wiki, filed or not.

:class:`SupportDesk` is the whole intake without Discord: the console, the
``wikibot tickets`` commands and the bot's ``/support`` all drive it.

1. ``new_draft`` / ``resumable``: a draft per user, kept between the form's steps
   (drafts expire after ``IntakeSettings.draft_ttl`` seconds).
2. ``save``: answers for some fields (typed, or an uploaded log) are cleaned and
   redacted (:mod:`knowledge.intake.validate`) and stored; problems come back worded.
3. ``check``: the triage of the draft (:mod:`knowledge.triage.engine`), worded like
   every triage by :func:`knowledge.answers.support_check_reply`: what was redacted
   (kind and field), launch findings, known errors, suggested pages with why, the
   checklist with the items still missing.
4. ``deflect`` ("this solved it") or ``file``: a ticket, idempotent by draft id and
   rate limited per user; ``post`` tells the store the ticket waits for the forum.
5. ``set_status``: solved, closed, reopened, by the asker or staff.
6. ``ticket_post``: the forum post's title, text, embed fields, attachments and tags;
   ``start_post`` / ``post_failed`` / ``posted`` / ``due_posts`` keep pending posts and
   retry them; a post begun but never recorded is looked for (by ``TicketPost.key``)
   before it is made again.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from knowledge.intake.fields import Form, build_form
from knowledge.intake.records import Draft, Ticket
from knowledge.intake.similar import Corpus, SimilarTickets, SolvedAnswer
from knowledge.intake.store import NotFound, RateLimit, RateLimited, TicketStore
from knowledge.intake.validate import Cleaned, Problem, clean_value, read_upload
from knowledge.reply import Field, Reply
from knowledge.templates import Templates, load_templates
from knowledge.text import code_block, cut_tail, escape_markdown, markdown_link, truncate
from knowledge.triage.engine import TriageContext, TriageResult
from knowledge.triage.redact import mask_credentials, redact, redact_public
from knowledge.triage.request import LogPart

if TYPE_CHECKING:
    from knowledge.answers._state import Links
    from knowledge.gaps.recorder import GapRecorder

__all__ = [
    "CHECKED_KEPT",
    "LOG_TAIL_LINES",
    "MAX_TITLE_CHARS",
    "Filed",
    "IntakeError",
    "IntakeSettings",
    "Saved",
    "SupportDesk",
    "TicketPost",
    "Upload",
    "log_cut_line",
    "summarise",
]

#: Forum post (thread) names are at most 100 characters.
MAX_TITLE_CHARS: Final = 100
#: A line that only opens or closes a fenced code block: no title for a post.
_FENCE_LINE_RE: Final = re.compile(r"(?:`{3,}|~{3,})[\w+.-]*")
#: Lines of the log attached to a ticket's post.
LOG_TAIL_LINES: Final = 300
#: Message content limit.
MAX_CONTENT_CHARS: Final = 2000
#: Longest answer kept for a solved ticket, characters.
MAX_ANSWER_CHARS: Final = 4000
#: A parallel setting named in a layout answer (``TP8``, ``dcp=4``, ``MTP 3``).
_PARALLEL_RE: Final = re.compile(
    r"\b(?:tp|dcp|dp|pp|mtp|dspark|tensor.parallel)\s*[=:x]?\s*\d", re.I
)
#: Checked drafts whose triage summary is kept for filing (the newest ones).
CHECKED_KEPT: Final = 512
#: A draft id as :meth:`SupportDesk.unsaved_draft` makes them.
_DRAFT_ID_RE: Final = re.compile(r"[0-9a-f]{16}")
#: Ticket status -> the event recorded when a ticket moves there.
_STATUS_EVENTS: Final = {"solved": "solved", "closed": "closed", "open": "reopened"}


class IntakeError(Exception):
    """An expected refusal, worded for the user (``str(exc)``); ``code`` names it."""

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class IntakeSettings:
    #: Seconds an untouched draft is kept.
    draft_ttl: float = 24 * 3600.0
    rate: RateLimit = field(default_factory=RateLimit)
    #: Seconds before the first retry of a failed post; doubles up to ``retry_max``.
    retry_base: float = 30.0
    retry_max: float = 1800.0
    #: Seconds one poster holds a ticket before another may try.
    lease: float = 60.0
    #: Attempts at a post Discord refuses for good (a 400: a required tag missing, a
    #: body it will not take) before the post is given up (``post_state`` "failed").
    refused_attempts: int = 3


@dataclass(frozen=True, slots=True)
class Upload:
    """A file given for a field: its bytes (None when not downloaded) and declared size."""

    data: bytes | None
    size: int
    filename: str = ""


@dataclass(frozen=True, slots=True)
class Saved:
    draft: Draft
    #: Worded problems with this step's answers (empty when all were fine).
    problems: tuple[str, ...]
    codes: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class Filed:
    ticket: Ticket
    #: False when the draft had been filed before (a second press, a retry).
    created: bool


@dataclass(frozen=True, slots=True)
class TicketPost:
    """A ticket as a forum post, within Discord's limits, without the asker's mention."""

    title: str
    content: str
    reply: Reply
    #: (file name, text) pairs: the redacted launch command, the log tail.
    attachments: tuple[tuple[str, str], ...]
    #: Tag names wanted on the post: the family (when known) and the status.
    tags: tuple[str, ...]
    #: The ticket's idempotency key (its draft id), shown in the embed's footer: a post
    #: made but never recorded (the bot killed in between) is found again by it.
    key: str = ""


#: ``Draft.origin`` key holding which part of a cut log the draft keeps.
_LOG_PART: Final = "log_part"
#: The numbers kept about a cut log, in the order ``Draft.origin`` holds them.
_LOG_PART_KEYS: Final = ("first", "lines", "skipped", "total")


def _log_part(draft: Draft) -> dict[str, int] | None:
    """Which part of its log the draft keeps (``first`` line of ``lines``; ``skipped`` of
    ``total`` characters), when the intake cut the log; None when it holds it whole."""
    raw = draft.origin.get(_LOG_PART, "")
    numbers = raw.split(",")
    if len(numbers) != len(_LOG_PART_KEYS) or not all(n.isdigit() for n in numbers):
        return None
    return dict(zip(_LOG_PART_KEYS, map(int, numbers), strict=True))


def _merge_redactions(
    old: tuple[tuple[str, str, int], ...], fields: set[str], new: list[tuple[str, str, int]]
) -> tuple[tuple[str, str, int], ...]:
    kept = [r for r in old if r[1] not in fields]
    return tuple(kept + new)


def summarise(result: TriageResult, form: Form) -> dict[str, Any]:
    """What a ticket keeps of a triage: small, redacted, enough to render it again."""
    return {
        "confidence": result.confidence,
        "family": result.family.family.key if result.family is not None else None,
        "family_name": result.family.family.name if result.family is not None else None,
        "findings": [
            {"severity": f.severity, "message": f.message, "page": f.page} for f in result.findings
        ],
        "known_errors": [
            {"title": k.title, "page": k.page, "fix": k.fix} for k in result.known_errors
        ],
        "suggestions": [
            {"page": s.page, "title": s.title, "why": "; ".join(s.why)} for s in result.suggestions
        ],
        "missing": [
            {"key": i.key, "label": i.label, "status": i.status, "detail": i.detail}
            for i in result.completeness.items
            if i.status in ("missing", "thin")
        ],
        "checklist_source": form.source,
    }


class SupportDesk:
    def __init__(
        self,
        context: TriageContext,
        store: TicketStore,
        *,
        settings: IntakeSettings | None = None,
        templates: Templates | None = None,
        clock: Callable[[], float] = time.time,
        links: Links | None = None,
    ) -> None:
        self.context = context
        #: The wiki's published URLs: pages named in a post are links when known.
        self.links = links
        self.store = store
        self.settings = settings or IntakeSettings()
        self.t = templates or load_templates("intake.yaml")
        self.clock = clock
        self.form: Form = build_form(context.checklist, self.t)
        #: The store's memo of redacted texts: answers are redacted once, when given, and
        #: neither the store nor the triage scans them again.
        self.scrubber = store.scrubber
        #: draft id -> (the draft's updated_at when checked, the triage summary): "File
        #: the ticket" files what the user was shown without running the triage again.
        self._checked: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._checked_lock = threading.Lock()
        #: The solved tickets as :class:`SimilarTickets`, built at first use (the wiki's
        #: sections teach the word weights) and again after an answer is marked.
        self._similar: SimilarTickets | None = None
        self._corpus: Corpus | None = None
        self._similar_lock = threading.Lock()
        #: ticket id -> when its post was allowed to ping the helpers (claim_ping), until
        #: the post is made (the ping recorded) or fails (the ping kept for its retry).
        self._pings_held: dict[int, float] = {}
        self._ping_lock = threading.Lock()

    # ----------------------------------------------------------------- drafts

    def resumable(self, user: str) -> Draft | None:
        """The user's open draft, if one is younger than the draft expiry."""
        return self.store.open_draft(user, self.clock() - self.settings.draft_ttl)

    def expire_drafts(self) -> int:
        """Delete drafts older than the expiry (a write: run it now and then, not per
        request; :meth:`resumable` already ignores them). Returns how many went."""
        return self.store.expire_drafts(self.clock() - self.settings.draft_ttl)

    def new_draft(self, user: str, *, model: str = "") -> Saved:
        """A fresh, stored draft; ``model`` (a family name or key) pre-fills the model page."""
        saved = self.unsaved_draft(user, model=model)
        return replace(saved, draft=self.store.save_draft(saved.draft))

    def unsaved_draft(self, user: str, *, model: str = "") -> Saved:
        """A fresh draft that is not stored: the form's first step stores it when it is
        submitted (:meth:`save` with ``step=1``), so a form opened and dismissed leaves
        nothing behind for "continue your draft" to offer."""
        now = self.clock()
        draft = Draft(id=secrets.token_hex(8), user=user, created_at=now, updated_at=now)
        problems: list[str] = []
        if model.strip():
            key, problem = self.resolve_model(model)
            if key:
                draft = replace(draft, values={"model_page": key}, origin={"model": key})
            elif problem:
                problems.append(problem)
        return Saved(draft, tuple(problems))

    def draft(self, draft_id: str, user: str) -> Draft:
        """The open draft ``draft_id`` of ``user``, or an :class:`IntakeError`. A draft
        filed or marked solved is closed: the buttons and forms of its earlier steps
        (still on the user's screen) are refused, saying why, rather than changing a
        draft whose ticket is already posted."""
        draft = self.store.get_draft(draft_id)
        if draft is None or draft.updated_at < self.clock() - self.settings.draft_ttl:
            raise IntakeError("no_draft", self.t("errors.no_draft"))
        if draft.user != user:
            raise IntakeError("not_yours", self.t("errors.not_yours"))
        if draft.state == "filed":
            ticket = self.store.ticket_for_draft(draft_id)
            number = ticket.id if ticket is not None else "?"
            raise IntakeError("closed", self.t("errors.draft_filed", id=number))
        if draft.state == "deflected":
            raise IntakeError("closed", self.t("errors.draft_solved"))
        return draft

    def _draft_for_step(self, draft_id: str, user: str, step: int | None) -> Draft:
        fresh = step == 1 and _DRAFT_ID_RE.fullmatch(draft_id)
        if fresh and self.store.get_draft(draft_id) is None:  # opened, never stored: now
            now = self.clock()
            return Draft(id=draft_id, user=user, created_at=now, updated_at=now)
        return self.draft(draft_id, user)

    def resolve_model(self, name: str) -> tuple[str | None, str | None]:
        """(family key, None) for a known family or page; (None, worded problem) if not."""
        catalogue = self.context.catalogue
        text = " ".join(name.split())[:200]
        if not text:
            return None, None
        if text.strip().lstrip("./") in self.context.wiki.pages:
            return text.strip().lstrip("./"), None
        if catalogue is None or not catalogue.families:
            return text, None
        if catalogue.family(text) is not None:
            return text, None
        match = catalogue.match(text)
        if match.family is not None and not match.ambiguous:
            return match.family.key, None
        # redacted whole, then cut: a cut through a token would leave a piece no pattern knows
        safe = escape_markdown(truncate(" ".join(redact(name).text.split()), 60))
        if match.others:
            names = ", ".join(f.name for f in match.others[:5])
            return None, self.t("problems.did_you_mean", name=safe, names=names)
        names = ", ".join(f.name for f in catalogue.families if f.group == "main")
        return None, self.t("problems.unknown_model", name=safe, names=truncate(names, 300))

    def model_choices(self) -> list[tuple[str, str]]:
        """(label, value) of every family, for a select; at most 25."""
        catalogue = self.context.catalogue
        if catalogue is None:
            return []
        return [(truncate(f.name, 100), f.key[:100]) for f in catalogue.families][:25]

    def save(
        self,
        draft_id: str,
        user: str,
        values: Mapping[str, str],
        *,
        uploads: Mapping[str, Upload] | None = None,
        step: int | None = None,
    ) -> Saved:
        """Store answers (and uploaded files) for some fields of a draft.

        Unknown keys are ignored. An upload replaces the pasted value of its field
        unless the upload is refused, in which case the pasted value (if any) is kept.
        The first step of a draft made by :meth:`unsaved_draft` creates it.
        """
        draft = self._draft_for_step(draft_id, user, step)
        merged = dict(draft.values)
        codes: list[Problem] = []
        new_redactions: list[tuple[str, str, int]] = []
        touched: set[str] = set()
        results: dict[str, Cleaned] = {}
        for key, raw in values.items():
            spec = self.form.field(key)
            if spec is None:
                continue
            results[key] = clean_value(spec, raw, self.scrubber.redact)
        for key, upload in (uploads or {}).items():
            spec = self.form.field(key)
            if spec is None:
                continue
            cleaned = read_upload(spec, upload.data, upload.size, self.scrubber.redact)
            if cleaned.value:
                earlier = results[key].problems if key in results else ()
                results[key] = replace(cleaned, problems=cleaned.problems + earlier)
            elif key in results:  # refused: the pasted text of this step stands
                results[key] = replace(
                    results[key], problems=results[key].problems + cleaned.problems
                )
            else:  # refused, nothing pasted now: what the draft held stands
                codes.extend(cleaned.problems)
        origin = dict(draft.origin)
        for key, cleaned in results.items():
            touched.add(key)
            if cleaned.value:
                merged[key] = cleaned.value
            else:
                merged.pop(key, None)
            codes.extend(cleaned.problems)
            spec = self.form.field(key)
            if spec is not None and spec.is_log:  # a new log: cut (say where) or whole
                cut = next((p for p in cleaned.problems if p.code == "log_cut"), None)
                if cut is not None and cleaned.value:
                    origin[_LOG_PART] = ",".join(str(cut.values[k]) for k in _LOG_PART_KEYS)
                else:
                    origin.pop(_LOG_PART, None)
            new_redactions.extend((r.kind, r.field, r.count) for r in cleaned.redactions)
        if "model_page" in results and merged.get("model_page"):
            key, problem = self.resolve_model(merged["model_page"])
            if key is None and problem:
                codes.append(Problem("model_page", "unknown_model", {"text": problem}))
        worded = tuple(self._word(p) for p in codes)
        done = max(
            [draft.step]
            + [self.form.field(k).step for k in touched if self.form.field(k) is not None]
        )
        draft = replace(
            draft,
            values=merged,
            step=step if step is not None else done,
            redactions=_merge_redactions(draft.redactions, touched, new_redactions),
            notes=worded,
            origin=origin,
            updated_at=self.clock(),
        )
        return Saved(self.store.save_draft(draft), worded, tuple(codes))

    def _word(self, problem: Problem) -> str:
        if problem.code == "unknown_model":
            return str(problem.values["text"])
        return self.t(f"problems.{problem.code}", **problem.values)

    def blocking(self, draft: Draft) -> tuple[str, ...]:
        """Worded reasons the draft cannot be checked or filed yet (required fields)."""
        out = []
        for spec in self.form.fields:
            if spec.required and not draft.values.get(spec.key, "").strip():
                out.append(self.t("problems.empty", field=spec.label))
        return tuple(out)

    # ----------------------------------------------------------------- checking

    def request(self, draft: Draft) -> dict[str, Any]:
        """The draft as a triage request (extra checklist answers folded into the text);
        a log the intake cut comes with its ``LogPart``, so the reply says which part was
        kept and numbers its lines as in the log given."""
        request: dict[str, Any] = {}
        extra: list[str] = []
        for spec in self.form.fields:
            value = draft.values.get(spec.key, "")
            if not value:
                continue
            if spec.key.startswith("other_"):
                extra.append(f"{spec.label}: {value}")
            elif spec.key == "model_page":  # a family from the form's list: its runbook
                request[spec.key] = self._runbook_of(value)
            elif spec.key == "layout":  # one answer: the GPUs, and settings if it names any
                request["gpus"] = value
                if _PARALLEL_RE.search(value):
                    request["settings"] = value
            else:
                request[spec.key] = value
        if extra:
            request["text"] = "\n".join([request.get("text", ""), *extra]).strip()
        part = _log_part(draft)
        if part is not None and request.get("log"):
            request["log_part"] = LogPart(
                part["first"], part["skipped"], part["total"], "characters"
            )
        return request

    def values_from_request(self, request: Mapping[str, str]) -> dict[str, str]:
        """Form answers from triage-request fields (``gpus`` and ``settings`` make the
        layout answer; fields the form does not ask for are added to the text)."""
        values = {k: v for k, v in request.items() if v.strip()}
        if self.form.field("layout") is not None:
            layout = ", ".join(values.pop(k) for k in ("gpus", "settings") if k in values)
            if layout:
                values["layout"] = layout
        extra = [k for k in list(values) if self.form.field(k) is None]
        if extra:
            values["text"] = "\n".join(
                [values.get("text", ""), *(f"{k}: {values.pop(k)}" for k in extra)]
            ).strip()
        return values

    def _runbook_of(self, value: str) -> str:
        """The model page answer as the triage reads it: a family key (what the form's
        list gives) becomes the family's current runbook page, the link the checklist
        asks for; anything else stays as given."""
        catalogue = self.context.catalogue
        family = catalogue.family(value) if catalogue is not None else None
        if family is not None and family.current_page and value not in self.context.wiki.pages:
            return family.current_page
        return value

    def triage(self, draft: Draft) -> TriageResult:
        return self.context.run(self.request(draft), known_clean=self.scrubber.known_clean)

    def check(self, draft_id: str, user: str) -> tuple[Draft, TriageResult]:
        """The triage of a draft, shown before filing (worded by
        :func:`knowledge.answers.support_check_reply`); kept for :meth:`file`."""
        return self.check_draft(self.draft(draft_id, user))

    def check_reply(self, draft: Draft, *, gaps: GapRecorder | None = None) -> Reply:
        """The private answer to a finished ``draft`` (already read or just saved): its
        triage worded (redacting again) with a solved ticket like it first, when one is;
        a triage that was not confident noted in ``gaps`` (for ``/wiki gaps``). Raises
        :class:`IntakeError` when the draft cannot be checked yet."""
        from knowledge.answers import support_check_reply

        _, result = self.check_draft(draft)
        if gaps is not None:
            gaps.note_triage("/support", draft.values.get("text", ""), result)
        reply = support_check_reply(
            result,
            draft.redactions,
            self.context.templates,
            self.t,
            draft_id=draft.id,
            links=self.links,
        )
        solved = self.similar_field(draft)
        return replace(reply, fields=(solved, *reply.fields)) if solved else reply

    def check_draft(self, draft: Draft) -> tuple[Draft, TriageResult]:
        """:meth:`check` of a draft already read from the store (by :meth:`draft`, or
        returned by :meth:`save`): not read again."""
        blocking = self.blocking(draft)
        if blocking:
            raise IntakeError("empty", "\n".join(blocking))
        result = self.triage(draft)
        summary = summarise(result, self.form)
        with self._checked_lock:
            self._checked[draft.id] = (draft.updated_at, summary)
            self._checked.move_to_end(draft.id)
            while len(self._checked) > CHECKED_KEPT:
                self._checked.popitem(last=False)
        return draft, result

    def _summary(self, draft: Draft) -> dict[str, Any]:
        """The triage summary of ``draft``: the one its check showed when the draft has not
        changed since, else a fresh triage (after a restart, or from the command line)."""
        with self._checked_lock:
            checked = self._checked.pop(draft.id, None)
        if checked is not None and checked[0] == draft.updated_at:
            return checked[1]
        return summarise(self.triage(draft), self.form)

    # ----------------------------------------------------------------- filing

    def deflect(self, draft_id: str, user: str) -> Draft:
        draft = self.draft(draft_id, user)
        return self.store.deflect(draft.id, user, self.clock())

    def title_for(self, draft: Draft) -> str:
        for key in ("text", "actual", "expected"):
            value = draft.values.get(key, "")
            lines = (ln.strip() for ln in value.splitlines())
            line = next((ln for ln in lines if ln and not _FENCE_LINE_RE.fullmatch(ln)), "")
            if line:
                return truncate(" ".join(line.split()), MAX_TITLE_CHARS)
        return truncate(self.t("ticket.title_fallback", user=draft.user), MAX_TITLE_CHARS)

    def file(self, draft_id: str, user: str, *, post: bool, private: bool = False) -> Filed:
        """File the draft as a ticket (once: a second call returns the same ticket).
        ``private``: the asker chose a private thread in the staff channel; a ticket
        created is private from its first write (see :meth:`make_private`)."""
        before = self.store.ticket_for_draft(draft_id)
        if before is not None:
            if before.user != user:
                raise IntakeError("not_yours", self.t("errors.not_yours"))
            return Filed(before, False)
        draft = self.draft(draft_id, user)
        blocking = self.blocking(draft)
        if blocking:
            raise IntakeError("empty", "\n".join(blocking))
        summary = self._summary(draft)
        part = _log_part(draft)
        if part is not None:
            summary = {**summary, "log_part": part}
        family = summary.get("family") or ""
        if not family:
            key, _ = self.resolve_model(draft.values.get("model_page", ""))
            family = (
                key if key and self.context.catalogue and self.context.catalogue.family(key) else ""
            )
        rate = self.settings.rate
        try:
            ticket, created = self.store.file_ticket(
                draft,
                title=self.title_for(draft),
                family=family,
                triage=summary,
                post=post,
                at=self.clock(),
                limit=rate,
                lease=self.settings.lease,
                private=private,
            )
        except RateLimited as exc:
            raise IntakeError(
                "rate_limited",
                self.t(
                    "errors.rate_limited",
                    count=rate.count,
                    window=_duration(rate.seconds),
                    wait=_duration(exc.retry_after),
                ),
                retry_after=exc.retry_after,
            ) from None
        return Filed(ticket, created)

    # ----------------------------------------------------------------- lifecycle

    def ticket(self, ticket_id: int) -> Ticket:
        ticket = self.store.get_ticket(ticket_id)
        if ticket is None:
            raise IntakeError("unknown_ticket", self.t("errors.unknown_ticket", id=ticket_id))
        return ticket

    def set_status(self, ticket_id: int, status: str, *, actor: str, staff: bool) -> Ticket:
        """Move a ticket to ``open`` (reopen), ``solved`` or ``closed``, as its asker or staff."""
        ticket = self.ticket(ticket_id)
        if not staff and actor != ticket.user:
            raise IntakeError("not_allowed", self.t("errors.not_allowed"))
        if status not in _STATUS_EVENTS:
            raise ValueError(status)
        if ticket.status == status:
            raise IntakeError(
                "bad_status",
                self.t(
                    "errors.bad_status", id=ticket.id, status=self.t(f"ticket.statuses.{status}")
                ),
            )
        try:
            return self.store.set_status(
                ticket_id, status, actor=actor, at=self.clock(), event=_STATUS_EVENTS[status]
            )
        except NotFound:
            raise IntakeError(
                "unknown_ticket", self.t("errors.unknown_ticket", id=ticket_id)
            ) from None

    def claim(self, ticket_id: int, *, actor: str, staff: bool, release: bool = False) -> Ticket:
        """``actor`` (staff) becomes the open ticket's helper, or (``release``) nobody is:
        the events ``claimed`` / ``released``; :attr:`Ticket.helper` reads them."""
        if not staff:
            raise IntakeError("not_allowed", self.t("errors.staff_only"))
        ticket = self.ticket(ticket_id)
        if ticket.status != "open":
            status = self.t(f"ticket.statuses.{ticket.status}")
            raise IntakeError("bad_status", self.t("errors.not_open", id=ticket.id, status=status))
        if release and ticket.helper is None:
            raise IntakeError("bad_status", self.t("errors.not_claimed", id=ticket.id))
        if not release and ticket.helper == actor:
            raise IntakeError("bad_status", self.t("errors.claimed_already", id=ticket.id))
        kind = "released" if release else "claimed"
        return self.store.record_event(ticket_id, kind, actor, at=self.clock())

    def make_private(self, ticket_id: int) -> Ticket:
        """The asker chose a private thread in the staff channel for this ticket."""
        return self.store.record_event(ticket_id, "private", "bot", at=self.clock())

    def is_private(self, ticket_id: int) -> bool:
        return any(e.kind == "private" for e in self.store.events(ticket_id))

    def mark_answer(
        self, ticket_id: int, *, actor: str, staff: bool, answer: str, url: str
    ) -> Ticket:
        """Keep ``answer`` (a message of the ticket's thread, marked by its asker or staff)
        as what solved the ticket, with its ``url``; an open ticket becomes solved. The
        next request like it is offered this ticket (:meth:`similar`)."""
        ticket = self.ticket(ticket_id)
        if not staff and actor != ticket.user:
            raise IntakeError("not_allowed", self.t("errors.not_allowed"))
        text = answer.strip()
        if not text:
            raise IntakeError("empty", self.t("errors.empty_answer"))
        # redacted whole, then cut: a cut through a token would leave a piece no pattern knows
        text = self.scrubber.redact(text, "answer").text
        question = "\n".join(
            ticket.values.get(key, "")
            for key in ("text", "actual", "expected")
            if key in ticket.values
        )
        ticket = self.store.save_answer(
            ticket_id,
            question=question or ticket.title,
            answer=truncate(text, MAX_ANSWER_CHARS),
            url=url,
            actor=actor,
            at=self.clock(),
        )
        with self._similar_lock:
            self._similar = None  # built again, with this answer, at the next request
        if ticket.status == "open":
            ticket = self.store.set_status(
                ticket_id, "solved", actor=actor, at=self.clock(), event="solved"
            )
        return ticket

    def similar(self, text: str) -> list[tuple[SolvedAnswer, float]]:
        """The solved ticket whose question is nearest ``text``, when it is near enough
        (see :mod:`knowledge.intake.similar`); [] when none is."""
        with self._similar_lock:
            finder = self._similar
        if finder is None:
            answers = self.store.solved_answers(public=True)
            if answers and self._corpus is None:  # none solved yet: no need to read the wiki
                pages = self.context.wiki.pages.values()
                self._corpus = Corpus.of(f"{s.title}\n{s.text}" for p in pages for s in p.sections)
            finder = SimilarTickets(answers, self._corpus or ())
            with self._similar_lock:
                self._similar = finder
        return finder.find(text)

    def nothing_solved(self) -> bool:
        """True when it is known without the store that no solved ticket can be offered
        (the solved tickets were read since the last answer was marked, and none was)."""
        with self._similar_lock:
            return self._similar is not None and not self._similar.answers

    def similar_field(self, draft: Draft) -> Field | None:
        """ "A similar ticket was solved" for the check of ``draft`` (see
        :meth:`similar_field_for`)."""
        return self.similar_field_for(
            "\n".join(draft.values.get(k, "") for k in ("text", "actual", "expected"))
        )

    def similar_field_for(self, question: str) -> Field | None:
        """ "A similar ticket was solved" for ``question`` (a request's text, or the words
        of a /search): the nearest solved ticket's title (linked to its thread) and the
        start of its answer; None when no solved ticket is near enough. Private tickets
        are never offered."""
        if not question.strip():
            return None
        found = self.similar(question)
        if not found:
            return None
        answer, _ = found[0]
        # Shown to another user: masked as the ticket's public post is (the store keeps
        # strings in no known format), and redacted again (stored by an older redaction).
        title, text = (
            redact_public(value, field).text
            for field, value in (("title", answer.title), ("answer", answer.answer))
        )
        line = self.t(
            "similar.line",
            id=answer.ticket_id,
            title=markdown_link(truncate(title, 100), answer.url or None),
            answer=escape_markdown(truncate(" ".join(text.split()), 300)),
        )
        return Field(self.t("similar.title"), line)

    def give_feedback(self, ticket_id: int, *, actor: str, helpful: bool) -> Ticket:
        """The asker's one answer to "was this helpful?", kept with the ticket (event
        ``feedback``, detail ``helpful`` or ``not_helpful``); a second is refused."""
        ticket = self.ticket(ticket_id)
        if actor != ticket.user:
            raise IntakeError("not_allowed", self.t("errors.feedback_not_asker"))
        if ticket.feedback is not None:
            raise IntakeError("bad_status", self.t("errors.feedback_given", id=ticket.id))
        detail = "helpful" if helpful else "not_helpful"
        return self.store.record_event(ticket_id, "feedback", actor, at=self.clock(), detail=detail)

    # ----------------------------------------------------------------- posting

    def due_posts(self) -> list[Ticket]:
        """Pending posts due now, each claimed for this caller (one poster per ticket)."""
        now = self.clock()
        return [
            t
            for t in self.store.posts_due(now)
            if self.store.claim_post(t.id, now=now, lease=self.settings.lease)
        ]

    def start_post(self, ticket_id: int) -> Ticket:
        """Record that the post is being created now (before the request is sent)."""
        return self.store.start_post(ticket_id, at=self.clock())

    def posted(self, ticket_id: int, thread_id: int) -> Ticket:
        return self.store.mark_posted(ticket_id, thread_id, at=self.clock())

    def post_failed(self, ticket: Ticket, error: str, *, refused: bool = False) -> Ticket:
        """Count a failed post; retried later with a growing delay. ``refused``: Discord
        refused the request itself (retrying the same post cannot help unless the forum
        changes): after ``settings.refused_attempts`` such failures the post is given up
        and the ticket stays in the store as "failed" for the staff to see."""
        now = self.clock()
        delay = min(self.settings.retry_max, self.settings.retry_base * 2**ticket.post_attempts)
        give_up = refused and ticket.post_attempts + 1 >= self.settings.refused_attempts
        return self.store.mark_post_failed(
            ticket.id, error, at=now, retry_at=now + delay, give_up=give_up
        )

    def pending_count(self) -> int:
        return self.store.pending_count()

    def claim_ping(self, ticket_id: int, quiet: float) -> bool:
        """True when the helpers may be pinged in this ticket's post: never pinged for it
        before, and no ping for any ticket in the last ``quiet`` seconds (a burst of
        tickets pings once). The ping is held for this post until the caller says whether
        the post went out carrying it (:meth:`ping_sent`) or not (:meth:`ping_unsent`):
        a post Discord refused spends no ping, so its retry pings instead. Held pings
        count in the quiet window, so posts made at the same moment ping once."""
        if any(e.kind == "helpers_pinged" for e in self.store.events(ticket_id)):
            return False
        now = self.clock()
        last = self.store.last_event_at("helpers_pinged")
        with self._ping_lock:
            if ticket_id in self._pings_held:
                return False
            held = max(self._pings_held.values(), default=None)
            if any(at is not None and now - at < quiet for at in (last, held)):
                return False
            self._pings_held[ticket_id] = now
        return True

    def ping_sent(self, ticket_id: int) -> None:
        """The post carrying the ping held by :meth:`claim_ping` is up: record the ping."""
        with self._ping_lock:
            at = self._pings_held.pop(ticket_id, None)
        if at is not None:
            self.store.record_event(ticket_id, "helpers_pinged", "bot", at=at)

    def ping_unsent(self, ticket_id: int) -> None:
        """The post that was to carry the held ping failed: the ping is not spent."""
        with self._ping_lock:
            self._pings_held.pop(ticket_id, None)

    def ping_found(self, ticket_id: int, at: float) -> bool:
        """An earlier attempt's post, found by a retry, carried the ping (it was sent at
        ``at``, though the bot saw an error): record it then, once, so the quiet window
        counts it. False when the ticket's ping was recorded already."""
        if any(e.kind == "helpers_pinged" for e in self.store.events(ticket_id)):
            return False
        self.store.record_event(ticket_id, "helpers_pinged", "bot", at=at)
        return True

    def failed_count(self) -> int:
        return self.store.failed_count()

    def page_url(self, ref: str) -> str | None:
        """The published URL of ``path#anchor``, or None (no link base)."""
        if self.links is None:
            return None
        path, _, anchor = ref.partition("#")
        return self.links.url(path, anchor or None)

    def page_ref(self, ref: str) -> str:
        """A wiki page named in a post: a Markdown link when its URL is known."""
        return markdown_link(ref, self.page_url(ref))

    def model_ref(self, value: str) -> tuple[str, str | None]:
        """The model page answer shown in a post, and its page's URL: a family (a key
        from the form's list) as its name linked to its current runbook, a page path
        linked to that page, anything else as typed."""
        catalogue = self.context.catalogue
        family = catalogue.family(value) if catalogue is not None else None
        if family is not None and family.current_page:
            url = self.page_url(family.current_page)
            return markdown_link(family.name, url), url
        if value in self.context.wiki.pages:
            url = self.page_url(value)
            return markdown_link(value, url), url
        return escape_markdown(value), None

    def ticket_post(self, ticket: Ticket) -> TicketPost:
        """The forum post for ``ticket``: a short text, an embed, attachments, tags.

        The post is public: on top of the redaction every stored text had, each text in
        it goes through :func:`~knowledge.triage.redact.mask_credentials`, which masks
        long random-looking strings in no known format."""
        t = self.t
        values = {
            key: mask_credentials(value, key).text if isinstance(value, str) else value
            for key, value in ticket.values.items()
        }
        summary = ticket.triage
        story = []
        for spec in self.form.fields:
            if spec.item is None and values.get(spec.key):
                story.append(
                    f"**{escape_markdown(spec.label)}**\n{escape_markdown(values[spec.key])}"
                )
        header = t(
            "ticket.status_line",
            id=ticket.id,
            status=t(f"ticket.statuses.{ticket.status}"),
            family=summary.get("family_name") or ticket.family or t("ticket.no_family"),
        )
        content = truncate(header + "\n\n" + "\n\n".join(story), MAX_CONTENT_CHARS - 200)
        attachments: list[tuple[str, str]] = []
        fields: list[Field] = []
        model_url: str | None = None
        for spec in self.form.fields:
            if spec.item is None:
                continue
            value = values.get(spec.key, "")
            if spec.key == "model_page" and value:
                shown, model_url = self.model_ref(value)
                fields.append(Field(spec.label, shown, inline=not spec.paragraph))
            elif spec.key == "command" and value:
                attachments.append((f"ticket-{ticket.id}-launch.txt", value + "\n"))
                fields.append(Field(spec.label, code_block(value, "bash", limit=1000)))
            elif spec.key == "log" and value:
                lines = value.splitlines()[-LOG_TAIL_LINES:]
                name = f"ticket-{ticket.id}-log-tail.txt"
                attachments.append((name, "\n".join(lines) + "\n"))
                tail = cut_tail("\n".join(lines), 700)
                said = log_cut_line(summary, t)
                fields.append(
                    Field(
                        spec.label,
                        (said + "\n" if said else "")
                        + t("ticket.attachment_log", lines=len(lines), name=name)
                        + "\n"
                        + code_block(tail, "text", limit=900 - len(said)),
                    )
                )
            else:
                shown = (
                    code_block(value, limit=1000)
                    if value and spec.paragraph
                    else (escape_markdown(value) if value else f"*{t('ticket.field_missing')}*")
                )
                fields.append(Field(spec.label, shown, inline=not spec.paragraph))
        findings = [
            t("ticket.finding", severity=f["severity"], message=escape_markdown(f["message"]))
            for f in summary.get("findings", [])
        ]
        if findings:
            fields.append(Field(t("ticket.sections.findings"), "\n".join(findings)))
        known = [
            t(
                "ticket.known_error",
                title=escape_markdown(k["title"]),
                page=self.page_ref(k["page"]),
            )
            for k in summary.get("known_errors", [])
        ]
        if known:
            fields.append(Field(t("ticket.sections.known_errors"), "\n".join(known)))
        suggestions = [
            t(
                "ticket.suggestion",
                title=escape_markdown(s["title"]),
                page=self.page_ref(s["page"]),
                why=escape_markdown(s["why"]),
            )
            for s in summary.get("suggestions", [])
        ]
        if suggestions:
            fields.append(Field(t("ticket.sections.suggestions"), "\n".join(suggestions)))
        top = summary.get("suggestions") or [{}]
        top_url = self.page_url(top[0]["page"]) if top[0].get("page") else None
        missing = [t("ticket.missing_item", label=m["label"]) for m in summary.get("missing", [])]
        if missing:
            fields.append(Field(t("ticket.sections.missing"), "\n".join(missing)))
        if ticket.redactions:
            lines = sorted(
                {t("ticket.redaction", kind=k, field=f) for k, f, _ in ticket.redactions}
            )
            fields.append(Field(t("ticket.sections.redactions"), "\n".join(lines)))
        public = tuple(
            Field(f.name, mask_credentials(f.value, f.name).text, f.inline) for f in fields
        )
        reply = Reply(
            "ticket",
            escape_markdown(mask_credentials(ticket.title, "title").text),  # an embed's title
            "",
            fields=public,
            footer=t("ticket.footer", id=ticket.id, key=ticket.draft_id),
            # The embed's link: the page the wiki's search put first, else the runbook.
            meta={"ticket": ticket.id, "url": top_url or model_url},
        )
        tags = tuple(x for x in (ticket.family, ticket.status) if x)
        return TicketPost(
            title=truncate(mask_credentials(ticket.title, "title").text, MAX_TITLE_CHARS),
            content=content,
            reply=reply.fitted(),
            attachments=tuple(attachments),
            tags=tags,
            key=ticket.draft_id,
        )


def log_cut_line(summary: Mapping[str, Any], t: Callable[..., str]) -> str:
    """The sentence saying which part of a cut log a ticket holds ("" when whole)."""
    part = summary.get("log_part")
    if not isinstance(part, Mapping):
        return ""
    try:
        first, lines, skipped, total = (int(part[k]) for k in _LOG_PART_KEYS)
    except (KeyError, TypeError, ValueError):
        return ""
    return t("ticket.log_cut", first=first, lines=lines, kept=total - skipped, total=total)


def _duration(seconds: float) -> str:
    seconds = max(1, round(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"
