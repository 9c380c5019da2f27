"""/support through the Discord stand-in: the wiki's answer and the forum post, under load.

    python -m benchmarks.support_bench [--wiki DIR] [--count N] [--in-flight K]
                                       [--layout split|shared|both] [--spec]
                                       [--delay SECONDS]
    python -m benchmarks support          # the same, from the benchmark runner

The real bot runs against the loopback stand-in. Each simulated user goes through
the whole form: ``/support``, step 1, "Continue", step 2 with a 300-line server log
uploaded, then "File the ticket". Two figures per flow:

- **deflection**: from the step-2 modal submit (INTERACTION_CREATE sent) to the
  private answer with the triage (redaction, triage and the embed included), wherever
  it lands: the first response, or the edit of "thinking…" when the bot deferred;
- **post**: from the "File the ticket" press to the forum post's request reaching
  the stand-in (store write, post body, attachments).

``--in-flight`` users run at once (default 20), each starting its next flow as soon
as its last one is posted (no think time: the bot is saturated). A ticker in the
bot's event loop records how late it wakes meanwhile (the stall).

Two layouts (``--layout both``, the default, prints each):

- **split**: the bot alone in this process, as in production (Discord is not inside
  the bot's process); the stand-in and the users in a child process, so the loop
  stall and ``bot_cpu_ms_per_flow`` are the bot's own. On a 2-core machine the two
  processes share the cores with whatever else runs.
- **shared**: bot, stand-in and users in one event loop and one process, as the
  tests run them; the stand-in's work is in every figure.

The stand-in holds every request, answer and gateway message ``--delay`` seconds
each way (default 0.08, a bot hosted near Discord): the 3 s deadline of an
interaction is met or missed as on the network. ``first_reply_max_ms`` is the
longest wait from a step-2 submit to its first response (the answer or
"thinking…"); ``expired`` counts interactions Discord refused as too late (10062).
The machine's load average is printed beside the figures (2 shared cores: other
work on them shows in every figure).

``*_cpu_ms_per_flow`` is CPU time of a process during the measured flows divided by
their number: what one flow costs each side. The stand-in's check of every body
against Discord's OpenAPI description (jsonschema) is the tests' business and off
unless ``--spec`` asks for it. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from benchmarks.discord_bench import _LagMeter
from benchmarks.stats import percentile

__all__ = ["main", "run"]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_WIKI = ROOT.parent / "shared" / "wiki-snapshot"
TARGET_DEFLECTION_P99_MS = 150.0
TARGET_POST_P99_MS = 300.0
TARGET_STALL_MS = 100.0
#: Seconds of network delay each way the stand-in adds by default.
DEFAULT_DELAY = 0.08
LAYOUT_NAMES = {
    "split": "the bot alone in this process; the stand-in and the users in another",
    "shared": "the bot, the stand-in and the users in one event loop",
}

LOG_LINE = (
    "(EngineCore_DP0 pid=310) INFO 05-15 03:30:{s:02d} [gpu_model_runner.py:2{n:03d}] step {n}"
)
LAUNCH = (
    "docker run --gpus all --ipc host -p 8000:8000 -e HF_TOKEN=hf_" + "Ab3" * 12 + " \\\n"
    "  vllm/vllm-openai:v0.11.0 --model org/Model-NVFP4 --tensor-parallel-size 8 \\\n"
    "  --max-model-len 131072 --gpu-memory-utilization 0.92"
)


def _log(i: int) -> bytes:
    lines = [LOG_LINE.format(s=n % 60, n=n) for n in range(299)]
    lines.append(f"(EngineCore_DP0 pid=310) ERROR request {i}: NCCL error: unhandled system error")
    return "\n".join(lines).encode()


def _ms(values: list[float], q: float) -> float:
    return round(percentile(values, q / 100) * 1000, 2)


async def _one(ds: Any, i: int, user: int) -> tuple[float, float, float]:
    from tests.discord_standin.modal_uploads import submit_modal_with_files

    opened = await ds.slash("support", user_id=user)
    step1 = await ds.submit_modal(
        opened,
        {
            "text": f"request {i}: the server dies after loading",
            "actual": "NCCL error at startup",
            "expected": "a running server",
        },
    )
    saved = (await step1.answer(timeout=60)).shown
    cont = next(b for row in saved["components"] for b in row["components"])
    step2_modal = await ds.press(saved, cont["custom_id"], user_id=user)
    files = {"log__file": [ds.attachment(f"server-{i}.log", _log(i))]}
    step2 = await submit_modal_with_files(
        ds, step2_modal, {"command": LAUNCH, "layout": "8x RTX PRO 6000, TP8"}, files=files
    )
    check = await step2.answer(timeout=60)  # the first response, or the edit after thinking…
    deflection = check.at - step2.sent_at
    first = min(r.at for r in step2.callbacks) - step2.sent_at
    file_id = next(
        b["custom_id"]
        for row in check.shown["components"]
        for b in row["components"]
        if b["custom_id"].startswith("wikibot:sp:file:")
    )
    since = len(ds.requests)  # the post comes after the press: older requests are not read
    pressed = await ds.press(check.shown, file_id, user_id=user, wait=False)
    title = f"request {i}: the server dies after loading"
    posted = await ds.wait_for_request(
        lambda r: r.route == "create_thread" and (r.json or {}).get("name") == title,
        since=since,
        timeout=60,
    )
    await pressed.answer(timeout=60)  # the user reads "filed" before starting again
    return deflection, posted.at - pressed.sent_at, first


async def _warm_up(ds: Any) -> None:
    """Four flows at once: the bot's threads, caches and the store are warm after them."""
    await asyncio.gather(*(_one(ds, i, 800_000_000_000_000_000 + i) for i in range(4)))


async def _load(ds: Any, count: int, in_flight: int) -> dict[str, Any]:
    """``count`` whole flows, ``in_flight`` at once (each user starts the next flow as soon
    as the last one is posted); the figures, with this process's CPU per flow."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(count):
        queue.put_nowait(100 + i)
    deflections: list[float] = []
    posts: list[float] = []
    firsts: list[float] = []
    expired_before = sum(1 for r in ds.requests if r.error_code == 10062)

    async def worker() -> None:
        while not queue.empty():
            i = queue.get_nowait()
            a, b, c = await _one(ds, i, 810_000_000_000_000_000 + i)
            deflections.append(a)
            posts.append(b)
            firsts.append(c)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "requests": len(deflections),
        "seconds": round(took, 2),
        "deflection_p50_ms": _ms(deflections, 50),
        "deflection_p99_ms": _ms(deflections, 99),
        "post_p50_ms": _ms(posts, 50),
        "post_p99_ms": _ms(posts, 99),
        "first_reply_max_ms": _ms(firsts, 100),
        "expired": sum(1 for r in ds.requests if r.error_code == 10062) - expired_before,
        "cpu_ms_per_flow": round(cpu * 1000 / max(1, len(deflections)), 2),
    }


async def _settled(bot: Any, timeout: float = 30.0) -> None:
    """Wait until the bot has recorded the forum posts it made (the last ones are
    recorded just after the stand-in saw them): stopping sooner would close the ticket
    store under them."""
    cog = bot.get_cog("SupportCog")
    desk = await cog.desk()
    loop = asyncio.get_running_loop()
    give_up = loop.time() + timeout
    while await cog.in_store(desk.pending_count) and loop.time() < give_up:
        await asyncio.sleep(0.01)


def _factory(kb: Any, config: Any) -> Callable[..., Any]:
    from bot.client import WikiBot

    def factory(**kwargs: Any) -> WikiBot:
        bot = WikiBot(config, knowledge=kb, **kwargs)
        bot.support_retry_interval = 3600.0
        return bot

    return factory


def _standin_config(knobs: dict[str, Any]) -> Any:
    """The stand-in's config: ``knobs`` are ``check_spec`` and ``round_trip_delay``."""
    from tests.discord_standin import StandinConfig

    return StandinConfig(wait_timeout=120.0, startup_timeout=120.0, **knobs)


async def _shared(
    kb: Any, config: Any, count: int, in_flight: int, knobs: dict[str, Any]
) -> dict[str, Any]:
    """The bot, the stand-in and the users in one event loop (one process, one core)."""
    from tests.discord_standin import run_bot

    async with run_bot(_factory(kb, config), _standin_config(knobs)) as ds:
        await ds.client.get_cog("SupportCog").desk()  # as the bot does once it is ready
        await _warm_up(ds)
        with _LagMeter() as lag:
            figures = await _load(ds, count, in_flight)
        await _settled(ds.client)
    cpu = figures.pop("cpu_ms_per_flow")
    return {**figures, **lag.figures(), "cpu_ms_per_flow (all)": cpu}


def _users_process(conn: Connection, count: int, in_flight: int, knobs: dict[str, Any]) -> None:
    """The stand-in and the simulated users, in a process of their own (see :func:`_split`)."""
    logging.getLogger("aiohttp").setLevel(logging.ERROR)
    asyncio.run(_users(conn, count, in_flight, knobs))


async def _users(conn: Connection, count: int, in_flight: int, knobs: dict[str, Any]) -> None:
    from tests.discord_standin import Standin

    loop = asyncio.get_running_loop()
    ds = Standin(_standin_config(knobs))
    await ds.start()
    try:
        conn.send(ds.port)
        await loop.run_in_executor(None, conn.recv)  # the bot is ready
        await _warm_up(ds)
        conn.send("start")
        figures = await _load(ds, count, in_flight)
        await ds.settle()  # answers still on their way back (the delay) reach the bot
        failed = [p.text for p in ds.unreported()]
        conn.send({"figures": figures, "problems": failed})
        await loop.run_in_executor(None, conn.recv)  # the bot has disconnected
    finally:
        await ds.close()


async def _split(
    kb: Any, config: Any, count: int, in_flight: int, knobs: dict[str, Any]
) -> dict[str, Any]:
    """The bot alone in this process, as in production; Discord's side (the stand-in and
    the users driving it) in a child process, so this loop and CPU are the bot's own."""
    from tests.discord_standin import run_bot

    loop = asyncio.get_running_loop()
    conn, child_conn = multiprocessing.Pipe()
    child = multiprocessing.get_context("spawn").Process(
        target=_users_process, args=(child_conn, count, in_flight, knobs), daemon=True
    )
    child.start()
    try:
        port = await loop.run_in_executor(None, _recv, conn, child)
        async with run_bot(_factory(kb, config), _standin_config(knobs), remote_port=port) as ds:
            await ds.client.get_cog("SupportCog").desk()  # as the bot does once it is ready
            conn.send("go")
            await loop.run_in_executor(None, _recv, conn, child)  # warmed up: measuring
            cpu = time.process_time()
            with _LagMeter() as lag:
                answer = await loop.run_in_executor(None, _recv, conn, child)
            cpu = time.process_time() - cpu
            await _settled(ds.client)
        conn.send("bye")
    finally:
        child.join(10)
        if child.is_alive():
            child.kill()
    if answer["problems"]:
        raise RuntimeError("the stand-in recorded problems:\n" + "\n".join(answer["problems"]))
    figures = answer["figures"]
    users_cpu = figures.pop("cpu_ms_per_flow")
    return {
        **figures,
        **lag.figures(),
        "bot_cpu_ms_per_flow": round(cpu * 1000 / max(1, figures["requests"]), 2),
        "standin_cpu_ms_per_flow": users_cpu,
    }


def _recv(conn: Connection, child: BaseProcess) -> Any:
    """The child's next message; an error if it died first."""
    while not conn.poll(0.5):
        if not child.is_alive():
            raise RuntimeError(f"the stand-in process exited with {child.exitcode}")
    return conn.recv()


LAYOUTS: dict[str, Callable[..., Awaitable[dict[str, Any]]]] = {"split": _split, "shared": _shared}


def run(
    wiki_dir: Path,
    *,
    count: int = 100,
    in_flight: int = 20,
    spec: bool = False,
    layouts: tuple[str, ...] = ("split", "shared"),
    delay: float = DEFAULT_DELAY,
) -> dict[str, dict[str, Any]]:
    """Figures per layout (``split``: the stand-in in another process; ``shared``: one loop)."""
    from bot.config import parse_config
    from knowledge.service import KnowledgeBase
    from tests.discord_standin import DEFAULT_IDS

    logging.getLogger("discord").setLevel(logging.ERROR)
    data = Path(tempfile.mkdtemp(prefix="support-bench-"))
    try:
        kb = KnowledgeBase.open(wiki_dir, data, link_base="https://example.invalid/wiki/")
        config = parse_config(
            {
                "discord": {"guild_ids": [DEFAULT_IDS.guild]},
                "wiki": {"path": str(wiki_dir)},
                "cooldown": {"rate": 100, "per": 1},
                "support": {"forum_channel_id": DEFAULT_IDS.forum, "rate_count": 0},
            },
            name="bench",
        )
        knobs = {"check_spec": spec, "round_trip_delay": delay}
        try:
            return {
                layout: {
                    "in_flight": in_flight,
                    "spec_checked": spec,
                    "delay_ms_each_way": round(delay * 1000),
                    **asyncio.run(LAYOUTS[layout](kb, config, count, in_flight, knobs)),
                }
                for layout in layouts
            }
        finally:
            kb.close()
    finally:
        shutil.rmtree(data, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wiki", type=Path, default=DEFAULT_WIKI)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--in-flight", type=int, default=20)
    parser.add_argument(
        "--spec", action="store_true", help="check every body against the OpenAPI description"
    )
    parser.add_argument(
        "--delay",
        type=float,
        default=DEFAULT_DELAY,
        help=f"network delay each way, seconds (default {DEFAULT_DELAY})",
    )
    parser.add_argument(
        "--layout",
        choices=[*LAYOUTS, "both"],
        default="both",
        help="split: the stand-in in a process of its own; shared: in the bot's loop",
    )
    args = parser.parse_args(argv)
    if not args.wiki.is_dir():
        print(f"{args.wiki} not found (use --wiki DIR)", file=sys.stderr)
        return 2
    layouts = tuple(LAYOUTS) if args.layout == "both" else (args.layout,)
    load_before = os.getloadavg()
    results = run(
        args.wiki,
        count=args.count,
        in_flight=args.in_flight,
        spec=args.spec,
        layouts=layouts,
        delay=args.delay,
    )
    load_after = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; after "
        + ", ".join(f"{x:.2f}" for x in load_after)
    )
    for layout, figures in results.items():
        print(f"{layout}: {LAYOUT_NAMES[layout]}")
        for key, value in figures.items():
            print(f"{key:>26}: {value}")
    print(
        f"targets: deflection p99 <= {TARGET_DEFLECTION_P99_MS:.0f} ms, "
        f"post p99 <= {TARGET_POST_P99_MS:.0f} ms, stall <= {TARGET_STALL_MS:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
