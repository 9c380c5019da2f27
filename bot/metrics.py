"""The bot's figures: Prometheus metrics (optional endpoint) and ``/wiki stats``.

Always collected, in a registry of the bot's own; served over HTTP only when the
config sets ``metrics.port`` (on ``metrics.host``, loopback by default), by
prometheus-client's own server in a thread of its own. ``/wiki stats`` shows the
same figures in one embed for servers without Prometheus.

Labels come from small fixed sets known to the code: command names as registered,
outcomes, exception class names, ticket statuses. Never user text.

- ``wikibot_commands_total{command,outcome}`` and ``wikibot_command_seconds{command}``
  (from the interaction's creation to the end of its handler);
- ``wikibot_support_requests_total{outcome}``: ``deflected`` (the wiki's answer
  solved it) against ``filed``; ``wikibot_tickets{status}``;
- ``wikibot_ticket_first_reply_seconds``: from a ticket's post to the first message
  in it by someone other than the asker and bots (tickets filed since the start);
- ``wikibot_wiki_pages``, ``wikibot_wiki_generation`` (loads seen since the start),
  ``wikibot_wiki_age_seconds`` (since the live wiki was fetched, else loaded),
  ``wikibot_wiki_info{revision}``, ``wikibot_wiki_fetch_ok`` and
  ``wikibot_wiki_fetch_checked_timestamp_seconds`` (with ``wiki.source``),
  ``wikibot_index_build_seconds`` (the last open or build of the index);
- ``wikibot_errors_total{kind}``: failures answered with "something went wrong", by
  exception class; ``wikibot_log_messages_total{level}`` for warnings and errors;
- ``process_resident_memory_bytes`` and the other ``process_*`` figures.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from prometheus_client.registry import Collector

from knowledge.intake.sqlite import ticket_figures

__all__ = ["BotMetrics", "Snapshot"]

log = logging.getLogger(__name__)

COMMAND_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0)
REPLY_BUCKETS = (60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 3 * 86400)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The figures of ``/wiki stats``, read from the registry."""

    commands: dict[str, dict[str, float]]  # command -> outcome -> count
    latency: dict[str, tuple[float, float]]  # command -> (count, seconds in all)
    deflected: float
    filed: float
    tickets: dict[str, float]
    first_reply: tuple[float, float]  # (count, seconds in all)
    wiki: dict[str, float]
    revision: str
    errors: dict[str, float]
    rss_bytes: float


class _CountLogs(logging.Handler):
    def __init__(self, counter: Counter) -> None:
        super().__init__(logging.WARNING)
        self.counter = counter

    def emit(self, record: logging.LogRecord) -> None:
        self.counter.labels(record.levelname.lower()).inc()


class _ReadAtScrape(Collector):
    """Figures read when asked: the loaded wiki, the source, the index, the tickets."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self._lock = threading.Lock()
        self._state: object = None
        self._generation = 0
        self._loaded_at = 0.0

    def note(self, state: object) -> None:
        """The wiki state answered from now; a new one counts a generation, loaded now."""
        with self._lock:
            if state is not self._state:
                self._state, self._loaded_at = state, time.time()
                self._generation += 1

    def collect(self) -> Iterator[Any]:
        bot = self.bot
        kb = getattr(bot, "_kb", None)
        if kb is None:
            return
        state = kb.state
        self.note(state)  # a reload not noted yet (the bot notes each as it settles)
        with self._lock:
            generation, loaded_at = self._generation, self._loaded_at
        wiki = state.wiki
        yield GaugeMetricFamily(
            "wikibot_wiki_pages", "Pages of the wiki answered from", value=len(wiki.pages)
        )
        yield GaugeMetricFamily(
            "wikibot_wiki_generation",
            "Wikis loaded since the start (1: the first; each refresh that changed it adds 1)",
            value=generation,
        )
        info = InfoMetricFamily("wikibot_wiki", "The revision answered from")
        info.add_metric([], {"revision": str(wiki.revision)})
        yield info
        born = loaded_at
        follower = getattr(bot, "follower", None)
        if follower is not None:
            live = follower.live()
            source = follower.state()
            if live is not None and live.fetched_at:
                born = live.fetched_at
            yield GaugeMetricFamily(
                "wikibot_wiki_fetch_ok",
                "1 when the last check of wiki.source succeeded, else 0",
                value=0 if source.last_error else 1,
            )
            yield GaugeMetricFamily(
                "wikibot_wiki_fetch_checked_timestamp_seconds",
                "When wiki.source was last checked (Unix time)",
                value=source.checked_at or 0,
            )
        yield GaugeMetricFamily(
            "wikibot_wiki_age_seconds",
            "Seconds since the live wiki was fetched (wiki.source) or loaded (wiki.path)",
            value=max(0.0, time.time() - born),
        )
        built = kb.last_build
        if built is not None:
            yield GaugeMetricFamily(
                "wikibot_index_build_seconds",
                "Seconds the last opening or build of the search index took",
                value=built.seconds,
            )
        figures = ticket_figures(kb.data_dir)
        if figures is not None:
            requests = GaugeMetricFamily(
                "wikibot_support_requests",
                "Support requests by outcome: deflected (the wiki answered) or filed",
                labels=["outcome"],
            )
            requests.add_metric(["deflected"], figures.deflected)
            requests.add_metric(["filed"], figures.filed)
            yield requests
            tickets = GaugeMetricFamily("wikibot_tickets", "Tickets by status", labels=["status"])
            for status, count in sorted(figures.by_status.items()):
                tickets.add_metric([status], count)
            yield tickets


class BotMetrics:
    """The registry of one bot, what feeds it, and its optional HTTP endpoint."""

    def __init__(self, bot: Any) -> None:
        # No ``*_created`` series beside each counter and histogram: nobody here reads
        # them, and they double what a scrape carries (a setting of the whole process).
        disable_created_metrics()
        self.registry = registry = CollectorRegistry()
        self.commands = Counter(
            "wikibot_commands",
            "Commands handled, by name and outcome",
            ["command", "outcome"],
            registry=registry,
        )
        self.latency = Histogram(
            "wikibot_command_seconds",
            "Seconds from a command's creation to the end of its handler",
            ["command"],
            buckets=COMMAND_BUCKETS,
            registry=registry,
        )
        self.errors = Counter(
            "wikibot_errors", "Failures by kind (exception class)", ["kind"], registry=registry
        )
        self.first_reply = Histogram(
            "wikibot_ticket_first_reply_seconds",
            "Seconds from a ticket's post to the first reply by someone other than the asker",
            buckets=REPLY_BUCKETS,
            registry=registry,
        )
        self.log_messages = Counter(
            "wikibot_log_messages", "Warnings and errors logged", ["level"], registry=registry
        )
        ProcessCollector(registry=registry)
        self._scraped = _ReadAtScrape(bot)
        registry.register(self._scraped)
        self._log_handler = _CountLogs(self.log_messages)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.address: tuple[str, int] | None = None

    # --- feeding -------------------------------------------------------------------

    def command_done(self, name: str, outcome: str, seconds: float) -> None:
        self.commands.labels(name, outcome).inc()
        self.latency.labels(name).observe(max(0.0, seconds))

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def wiki_loaded(self, state: object) -> None:
        """Called after each (re)load: the wiki's age and generation count from here."""
        self._scraped.note(state)

    # --- serving -------------------------------------------------------------------

    def start(self, host: str, port: int | None) -> None:
        """Count log warnings from now; serve ``/metrics`` when ``port`` is set (0: any)."""
        logging.getLogger().addHandler(self._log_handler)
        if port is None:
            return
        from prometheus_client import start_http_server

        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:  # the port taken, a host not ours: Discord is served anyway
            log.error("metrics: cannot listen on %s:%d (%s); no metrics endpoint", host, port, exc)
            return
        self.address = (host, self._server.server_port)
        log.info("metrics served on http://%s:%d/metrics", host, self._server.server_port)

    def stop(self) -> None:
        logging.getLogger().removeHandler(self._log_handler)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- reading -------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Every figure, read from the registry as a scrape would."""
        commands: dict[str, dict[str, float]] = {}
        latency: dict[str, tuple[float, float]] = {}
        values: dict[str, float] = {}
        tickets: dict[str, float] = {}
        requests: dict[str, float] = {}
        errors: dict[str, float] = {}
        first = [0.0, 0.0]
        counts: dict[str, float] = {}
        sums: dict[str, float] = {}
        revision = ""
        for family in self.registry.collect():
            for sample in family.samples:
                name, labels, value = sample.name, sample.labels, sample.value
                if name == "wikibot_commands_total":
                    commands.setdefault(labels["command"], {})[labels["outcome"]] = value
                elif name == "wikibot_command_seconds_count":
                    counts[labels["command"]] = value
                elif name == "wikibot_command_seconds_sum":
                    sums[labels["command"]] = value
                elif name == "wikibot_ticket_first_reply_seconds_count":
                    first[0] = value
                elif name == "wikibot_ticket_first_reply_seconds_sum":
                    first[1] = value
                elif name == "wikibot_tickets":
                    tickets[labels["status"]] = value
                elif name == "wikibot_support_requests":
                    requests[labels["outcome"]] = value
                elif name == "wikibot_errors_total":
                    errors[labels["kind"]] = value
                elif name == "wikibot_wiki_info":
                    revision = labels.get("revision", "")
                elif not labels:
                    values[name] = value
        for command, count in counts.items():
            latency[command] = (count, sums.get(command, 0.0))
        return Snapshot(
            commands=commands,
            latency=latency,
            deflected=requests.get("deflected", 0.0),
            filed=requests.get("filed", 0.0),
            tickets=tickets,
            first_reply=(first[0], first[1]),
            wiki=values,
            revision=revision,
            errors=errors,
            rss_bytes=values.get("process_resident_memory_bytes", 0.0),
        )
