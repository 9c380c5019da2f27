"""``/wiki stats``: the figures of :class:`bot.metrics.Snapshot` as one reply."""

from __future__ import annotations

from bot.metrics import Snapshot
from knowledge.reply import Field, Reply
from knowledge.templates import Templates
from knowledge.text import inline_code

__all__ = ["stats_reply"]

#: Commands listed, most used first.
COMMANDS_SHOWN = 10


def _duration(t: Templates, seconds: float) -> str:
    if seconds < 120:
        return t("stats.seconds", n=seconds)
    if seconds < 7200:
        return t("stats.minutes", n=seconds / 60)
    if seconds < 2 * 86400:
        return t("stats.hours", n=seconds / 3600)
    return t("stats.days", n=seconds / 86400)


def stats_reply(snapshot: Snapshot, t: Templates) -> Reply:
    fields: list[Field] = []
    ranked = sorted(snapshot.commands.items(), key=lambda item: -sum(item[1].values()))
    lines = []
    for name, outcomes in ranked[:COMMANDS_SHOWN]:
        count, total = snapshot.latency.get(name, (0.0, 0.0))
        parts = t("stats.separator").join(
            t("stats.outcome", outcome=outcome, n=int(n)) for outcome, n in sorted(outcomes.items())
        )
        mean = total / count if count else 0.0
        lines.append(t("stats.command_line", command=name, outcomes=parts, mean=mean))
    fields.append(Field(t("stats.commands"), "\n".join(lines) or t("stats.none"), False))
    handled = snapshot.deflected + snapshot.filed
    share = 100 * snapshot.deflected / handled if handled else 0.0
    support = t(
        "stats.support_line",
        deflected=int(snapshot.deflected),
        filed=int(snapshot.filed),
        share=share,
    )
    fields.append(Field(t("stats.support"), support, False))
    tickets = t("stats.separator").join(
        t("stats.outcome", outcome=status, n=int(n))
        for status, n in sorted(snapshot.tickets.items())
    )
    count, total = snapshot.first_reply
    first = (
        t("stats.first_reply_line", mean=_duration(t, total / count), n=int(count))
        if count
        else t("stats.first_reply_none")
    )
    fields.append(Field(t("stats.tickets"), f"{tickets or t('stats.none')}\n{first}", False))
    wiki = snapshot.wiki
    wiki_text = t(
        "stats.wiki_line",
        pages=int(wiki.get("wikibot_wiki_pages", 0)),
        generation=int(wiki.get("wikibot_wiki_generation", 0)),
        age=_duration(t, wiki.get("wikibot_wiki_age_seconds", 0.0)),
        revision=inline_code(snapshot.revision or "?"),
        build=wiki.get("wikibot_index_build_seconds", 0.0),
    )
    if "wikibot_wiki_fetch_ok" in wiki:
        ok = wiki["wikibot_wiki_fetch_ok"] == 1
        wiki_text += "\n" + t("stats.fetch_ok" if ok else "stats.fetch_failed")
    fields.append(Field(t("stats.wiki"), wiki_text, False))
    errors = t("stats.separator").join(
        t("stats.outcome", outcome=kind, n=int(n)) for kind, n in sorted(snapshot.errors.items())
    )
    fields.append(Field(t("stats.errors"), errors or t("stats.none"), True))
    memory = t("stats.memory_line", mb=snapshot.rss_bytes / 1e6)
    fields.append(Field(t("stats.memory"), memory, True))
    return Reply("status", t("stats.title"), t("stats.intro"), fields=tuple(fields), ephemeral=True)
