"""``python scripts/docker_stop_check.py IMAGE WIKI_DIR``: run the image as deployed,
connected to a Discord stand-in on the host's loopback, then ``docker stop`` it.

Part of ``make docker-smoke`` (run with the project's ``.venv`` python, which has the
stand-in's dependencies). What it checks, and prints as figures:

- the container's PID 1 is the image's ``tini``, and the bot runs as uid 10001, with
  ``--read-only`` and ``/tmp`` on tmpfs, as ``compose.yaml`` runs it;
- the bot connects (gateway identified, commands synced, heartbeat written);
- ``docker stop`` (SIGTERM through tini, SIGKILL after 10 s) ends it with exit code 0
  (137 would be Docker's SIGKILL), in well under those 10 s, and its log says it stopped.

The container runs ``tests/discord_standin/serve_process.py`` (mounted read-only, not
part of the image), which only points discord.py at the stand-in and refuses every
other host, then calls the image's own ``wikibot serve``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.discord_standin import DEFAULT_IDS, Standin  # noqa: E402

__all__ = ["main"]

#: How long the bot may take to connect, inside a container on a loaded machine.
CONNECT_WAIT = 90.0
#: Docker's own default before SIGKILL (``docker stop -t``).
STOP_GRACE = 10


def _docker(*args: str, check: bool = True) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout.strip()


async def _until(predicate, what: str, container: str) -> None:
    give_up = time.monotonic() + CONNECT_WAIT
    while not predicate():
        if _docker("inspect", "-f", "{{.State.Running}}", container) != "true":
            raise RuntimeError(f"the container exited before {what}")
        if time.monotonic() > give_up:
            raise RuntimeError(f"waited {CONNECT_WAIT:.0f} s for {what}")
        await asyncio.sleep(0.2)


async def run(image: str, wiki: Path) -> dict[str, object]:
    ds = Standin()
    await ds.start()
    work = Path(tempfile.mkdtemp(prefix="wikibot-stop-"))
    config = {
        "discord": {"guild_ids": [DEFAULT_IDS.guild]},
        "wiki": {"path": "/wiki", "refresh_minutes": 0},
        "support": {"forum_channel_id": DEFAULT_IDS.forum},
    }
    (work / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    work.chmod(0o755)
    (work / "config.yaml").chmod(0o644)
    launcher = ROOT / "tests" / "discord_standin" / "serve_process.py"
    volume = f"wikibot-stop-{int(time.time())}"
    name = f"wikibot-stop-{int(time.time() * 1000) % 10**9}"
    container = ""
    try:
        container = _docker(
            "run", "-d", "--name", name, "--network", "host", "--read-only",
            "--tmpfs", "/tmp",
            "-e", f"DISCORD_TOKEN={ds.config.token}",
            "-e", "WIKIBOT_LOG_FORMAT=json",
            "-v", f"{wiki}:/wiki:ro", "-v", f"{volume}:/data",
            "-v", f"{work}:/config:ro",
            "-v", f"{launcher}:/opt/standin/serve_process.py:ro",
            "--entrypoint", "/usr/bin/tini", image,
            "--", "python3", "/opt/standin/serve_process.py", str(ds.port),
            "serve", "--config", "/config/config.yaml",
        )  # fmt: skip
        started = time.monotonic()
        await _until(lambda: bool(ds.commands), "the bot to sync its commands", name)
        connected_s = time.monotonic() - started
        await _until(
            lambda: (
                "heartbeat"
                in _docker("exec", name, "sh", "-c", "ls /data/*/ /data 2>/dev/null", check=False)
            ),
            "the heartbeat",
            name,
        )
        pid1 = _docker("exec", name, "cat", "/proc/1/cmdline").replace("\x00", " ").strip()
        uid = _docker("exec", name, "id", "-u")
        signalled = time.monotonic()
        _docker("stop", "-t", str(STOP_GRACE), name)
        stop_s = time.monotonic() - signalled
        code = int(_docker("inspect", "-f", "{{.State.ExitCode}}", name))
        log = _logs(name)
        messages = []
        for line in log.splitlines():
            try:
                messages.append(json.loads(line).get("message", ""))
            except ValueError:
                continue
        return {
            "pid1": pid1,
            "uid": uid,
            "connected_s": round(connected_s, 2),
            "stop_s": round(stop_s, 2),
            "exit_code": code,
            "sigterm_logged": any("SIGTERM received" in m for m in messages),
            "stopped_logged": any(m.startswith("stopped in") for m in messages),
            "log_tail": log.splitlines()[-8:],
        }
    finally:
        if container:
            _docker("rm", "-f", name, check=False)
        _docker("volume", "rm", "-f", volume, check=False)
        await ds.close()


def _logs(name: str) -> str:
    """The container's output, stdout and stderr (where the bot logs) together."""
    done = subprocess.run(
        ["docker", "logs", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=60,
    )
    return done.stdout


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    image, wiki = argv[0], Path(argv[1]).resolve()
    try:
        figures = asyncio.run(run(image, wiki))
    except RuntimeError as exc:
        print(f"docker stop check: {exc}", file=sys.stderr)
        return 1
    tail = figures.pop("log_tail")
    for key, value in figures.items():
        print(f"  | {key}: {value}")
    ok = (
        figures["pid1"].startswith("/usr/bin/tini")
        and figures["uid"] == "10001"
        and figures["exit_code"] == 0
        and float(figures["stop_s"]) < STOP_GRACE
        and figures["sigterm_logged"]
        and figures["stopped_logged"]
    )
    if not ok:
        print("  the log's last lines:", *(f"  | {line}" for line in tail), sep="\n")
    print("  docker stop: " + ("clean" if ok else "NOT clean"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
