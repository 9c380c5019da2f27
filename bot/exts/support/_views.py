"""The /support modal and the buttons of the flow and of a ticket's post.

Every button is a :class:`discord.ui.DynamicItem` whose ``custom_id`` carries the
draft id or the ticket number, so buttons on any old message work after a restart.
Modals are built here but their submits are handled by the cog from the
``custom_id`` (see ``_helpers.MODAL_PREFIX``), for the same reason.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, ClassVar, Self

import discord

from bot.components import detached
from bot.errors import report_failure

from ._helpers import LOG_UPLOAD_ID, modal_id

if TYPE_CHECKING:
    from knowledge.intake.desk import SupportDesk
    from knowledge.intake.records import Draft
    from knowledge.templates import Templates

__all__ = [
    "FeedbackButton",
    "FlowButton",
    "TicketButton",
    "check_view",
    "feedback_view",
    "flow_view",
    "step_modal",
    "ticket_view",
]

log = logging.getLogger(__name__)

#: Components in one modal (Discord's limit).
MAX_MODAL_COMPONENTS = 5
#: Longest text input (Discord's limit).
MAX_INPUT = 4000


def step_modal(
    desk: SupportDesk,
    draft: Draft,
    step: int,
    t: Templates,
    choices: list[tuple[str, str]],
) -> discord.ui.Modal:
    """The modal for one step of the form, pre-filled from the draft."""
    form = desk.form
    modal = discord.ui.Modal(
        title=t("modal_title", step=step, steps=form.steps)[:45],
        custom_id=modal_id(draft.id, step),
    )
    fields = form.step(step)
    used = 0
    for spec in fields:
        current = draft.values.get(spec.key, "")
        component: discord.ui.Item[Any]
        if spec.is_model and choices:
            options = [
                discord.SelectOption(label=name[:100], value=key[:100], default=key == current)
                for name, key in choices[:25]
            ]
            component = discord.ui.Select(
                custom_id=spec.key,
                options=options,
                required=False,
                min_values=0,
                max_values=1,
                placeholder=t("model_placeholder")[:100],
            )
        else:
            limit = min(spec.max_chars, MAX_INPUT)
            component = discord.ui.TextInput(
                custom_id=spec.key,
                style=discord.TextStyle.paragraph if spec.paragraph else discord.TextStyle.short,
                required=spec.required,
                max_length=limit,
                placeholder=spec.placeholder[:100] or None,
                # A log longer than an input holds stays stored; an empty answer keeps it.
                default=current if current and len(current) <= limit else None,
            )
        modal.add_item(
            discord.ui.Label(
                text=spec.label[:45],
                description=spec.description[:100] or None,
                component=component,
            )
        )
        used += 1
    slots_left = MAX_MODAL_COMPONENTS - used
    if any(spec.is_log for spec in fields) and slots_left > 0:
        modal.add_item(
            discord.ui.Label(
                text=t("log_upload_label")[:45],
                description=t("log_upload_description")[:100],
                component=discord.ui.FileUpload(
                    custom_id=LOG_UPLOAD_ID, required=False, min_values=0, max_values=1
                ),
            )
        )
    return detached(modal)  # its submit is read by the cog from its custom_id


async def _cog_call(interaction: discord.Interaction, method: str, *args: Any) -> None:
    # discord.py only logs an exception raised by a dynamic item: answer it here.
    try:
        cog = interaction.client.get_cog("SupportCog")  # type: ignore[attr-defined]
        if cog is None:
            raise RuntimeError("the support extension is not loaded")
        await getattr(cog, method)(interaction, *args)
    except Exception as exc:
        await report_failure(interaction, exc)


class FlowButton(
    discord.ui.DynamicItem[discord.ui.Button],
    template=r"wikibot:sp:(?P<action>next|resume|new|solved|edit|file|private|post):(?P<draft>[0-9a-f]{1,32}):(?P<step>\d{1,2})",
):
    """A button of the /support flow (ephemeral messages): the draft id is in its id."""

    def __init__(self, action: str, draft: str, step: int = 0, *, label: str = "x", style=None):
        super().__init__(
            discord.ui.Button(
                label=label[:80],
                style=style or discord.ButtonStyle.secondary,
                custom_id=f"wikibot:sp:{action}:{draft}:{step}",
            )
        )
        self.action, self.draft, self.step = action, draft, step

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> FlowButton:
        return cls(match["action"], match["draft"], int(match["step"]), label=item.label or "x")

    async def callback(self, interaction: discord.Interaction) -> None:
        await _cog_call(interaction, "on_flow_button", self.action, self.draft, self.step)


class _TicketNumbered(discord.ui.DynamicItem[discord.ui.Button], template=r"(?!)"):
    """A button whose ``custom_id`` is ``wikibot:<namespace>:<choice>:<ticket number>``:
    the one place such ids are made and read. A subclass names its namespace and its
    choices (``class X(_TicketNumbered, namespace="tk", choices=(...))``); its id template
    is built from them, so a pressed id is parsed, and a made one checked, alike."""

    namespace: ClassVar[str]
    choices: ClassVar[tuple[str, ...]]

    def __init_subclass__(cls, *, namespace: str, choices: tuple[str, ...]) -> None:
        alternatives = "|".join(re.escape(choice) for choice in choices)
        template = (
            rf"wikibot:{re.escape(namespace)}:(?P<choice>{alternatives}):(?P<ticket>\d{{1,12}})"
        )
        super().__init_subclass__(template=template)
        cls.namespace, cls.choices = namespace, choices

    def __init__(self, choice: str, ticket: int, *, label: str = "x", style=None) -> None:
        super().__init__(  # discord.py checks the id against the template: ValueError
            discord.ui.Button(
                label=label[:80],
                style=style or discord.ButtonStyle.secondary,
                custom_id=f"wikibot:{self.namespace}:{choice}:{ticket}",
            )
        )
        self.choice, self.ticket = choice, ticket

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Button, match: Any, /
    ) -> Self:
        return cls(match["choice"], int(match["ticket"]), label=item.label or "x")


class TicketButton(
    _TicketNumbered, namespace="tk", choices=("solved", "close", "reopen", "claim", "release")
):
    """Solved / Close / Reopen on a ticket's forum post, for the asker and staff; Claim /
    Release for staff (with ``support.claim``)."""

    async def callback(self, interaction: discord.Interaction) -> None:
        await _cog_call(interaction, "on_ticket_button", self.choice, self.ticket)


class FeedbackButton(_TicketNumbered, namespace="fb", choices=("yes", "no")):
    """ "Was this helpful?" Yes / No under a solved ticket's notice, for its asker."""

    async def callback(self, interaction: discord.Interaction) -> None:
        await _cog_call(interaction, "on_feedback", self.choice == "yes", self.ticket)


def feedback_view(ticket_id: int, t: Templates) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(
        FeedbackButton("yes", ticket_id, label=t("feedback.yes"), style=discord.ButtonStyle.success)
    )
    view.add_item(FeedbackButton("no", ticket_id, label=t("feedback.no")))
    return view


def flow_view(*buttons: FlowButton) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for button in buttons:
        view.add_item(button)
    return view


def check_view(draft_id: str, t: Templates, *, private: bool = False) -> discord.ui.View:
    """ "This solved it" / "Edit" / "File the ticket" under the deflection answer, and
    "File privately" when private tickets are set up."""
    buttons = [
        FlowButton("solved", draft_id, label=t("check.solved"), style=discord.ButtonStyle.success),
        FlowButton("edit", draft_id, 1, label=t("check.edit")),
        FlowButton("file", draft_id, label=t("check.file"), style=discord.ButtonStyle.primary),
    ]
    if private:
        buttons.append(FlowButton("private", draft_id, label=t("check.private")))
    return flow_view(*buttons)


def ticket_view(
    ticket_id: int, status: str, t: Templates, *, claim: bool = False, helper: str | None = None
) -> discord.ui.View:
    """The lifecycle buttons a ticket in ``status`` offers; with ``claim``, Claim (or
    Release, when ``helper`` holds it) on an open ticket."""
    view = discord.ui.View(timeout=None)
    if status == "open":
        view.add_item(
            TicketButton(
                "solved", ticket_id, label=t("ticket.solved"), style=discord.ButtonStyle.success
            )
        )
        view.add_item(TicketButton("close", ticket_id, label=t("ticket.close")))
        if claim and helper is None:
            view.add_item(
                TicketButton(
                    "claim", ticket_id, label=t("ticket.claim"), style=discord.ButtonStyle.primary
                )
            )
        elif claim:
            view.add_item(TicketButton("release", ticket_id, label=t("ticket.release")))
    else:
        view.add_item(TicketButton("reopen", ticket_id, label=t("ticket.reopen")))
    return view
