"""``python -m tests.discord_standin.serve_process PORT wikibot-args...``: the real
``wikibot`` command in a process of its own, talking to a stand-in on 127.0.0.1:PORT.

For tests of what only a whole process shows (signals, exit codes, the log on stderr).
discord.py's REST base and gateway are pointed at the stand-in, and every aiohttp
session the bot opens refuses hosts other than loopback, as in-process runs do; the
rest is ``wikibot`` unchanged (its signal handlers, its logging, its exit code).
"""

from __future__ import annotations

import sys

__all__ = ["main"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def main(argv: list[str]) -> int:
    import aiohttp
    import discord
    import discord.gateway
    import discord.http
    import yarl

    port = int(argv[0])
    discord.http.Route.BASE = f"http://127.0.0.1:{port}/api/v10"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(f"ws://127.0.0.1:{port}/gateway-ws")

    async def loopback_only(session: object, context: object, params: object) -> None:
        host = params.url.host or ""  # type: ignore[attr-defined]
        if host not in _LOOPBACK and not host.startswith("127."):
            raise RuntimeError(f"refused {params.url}: only loopback in tests")  # type: ignore[attr-defined]

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(loopback_only)
    client_init = discord.Client.__init__

    def init(self: discord.Client, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("http_trace", trace)
        client_init(self, *args, **kwargs)

    discord.Client.__init__ = init  # type: ignore[method-assign]

    from bot.cli import main as wikibot

    return wikibot(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
