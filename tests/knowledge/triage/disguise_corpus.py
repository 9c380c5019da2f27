"""A corpus of server logs with secrets in disguise: every token kind, every disguise,
every line context, LF and CRLF.

Each :class:`Case` knows what it hid (``private``: the random parts of the secret, which
must never show, and ``encoded``: the form a reader could decode back) and what it put
around it (``noise``: the log prefixes, look-alike letters and other characters a
reader would strip to piece the secret back together). :func:`leaks` says whether an
output text still holds any of it: the secret's random part, or any eight characters
of it in a row, verbatim or once the noise is taken out and the lines are joined.

The corpus is deterministic (a seeded ``random.Random`` per case), so a leak found
here is found again with the same case id.
"""

from __future__ import annotations

import base64
import json
import random
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = [
    "CONTEXTS",
    "DISGUISES",
    "KINDS",
    "NEWLINES",
    "Case",
    "Token",
    "case",
    "corpus",
    "leaks",
]

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64URL = ALNUM + "-_"
UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#: Look-alike letters from Cyrillic and Greek, by the ASCII letter they pass for (the
#: attacker's side: which ones a paste may carry, not how redaction folds them).
LOOK_ALIKES = {
    "a": "\u0430",  # CYRILLIC SMALL LETTER A
    "c": "\u0441",  # CYRILLIC SMALL LETTER ES
    "e": "\u0435",  # CYRILLIC SMALL LETTER IE
    "h": "\u04bb",  # CYRILLIC SMALL LETTER SHHA
    "i": "\u0456",  # CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
    "o": "\u03bf",  # GREEK SMALL LETTER OMICRON
    "p": "\u0440",  # CYRILLIC SMALL LETTER ER
    "s": "\u0455",  # CYRILLIC SMALL LETTER DZE
    "x": "\u0445",  # CYRILLIC SMALL LETTER HA
    "y": "\u0443",  # CYRILLIC SMALL LETTER U
    "A": "\u0410",  # CYRILLIC CAPITAL LETTER A
    "B": "\u0392",  # GREEK CAPITAL LETTER BETA
    "E": "\u0415",  # CYRILLIC CAPITAL LETTER IE
    "H": "\u041d",  # CYRILLIC CAPITAL LETTER EN
    "I": "\u0406",  # CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I
    "K": "\u041a",  # CYRILLIC CAPITAL LETTER KA
    "M": "\u039c",  # GREEK CAPITAL LETTER MU
    "O": "\u041e",  # CYRILLIC CAPITAL LETTER O
    "P": "\u0420",  # CYRILLIC CAPITAL LETTER ER
    "T": "\u03a4",  # GREEK CAPITAL LETTER TAU
    "X": "\u03a7",  # GREEK CAPITAL LETTER CHI
}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e"]
COMBINING = ["\u0301", "\u0300", "\u0308", "\u0327", "\u0323", "\u0336"]


def _random(rng: random.Random, alphabet: str, size: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(size))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass(frozen=True)
class Token:
    """A secret as it is written (``text``) and its random parts (``private``)."""

    text: str
    private: tuple[str, ...]
    #: True for a token found by its format alone (it may be broken over lines); False
    #: for a value found by its name or header (``HF_TOKEN=``, ``Authorization:``).
    shaped: bool = True


def _hf(rng: random.Random) -> Token:
    body = _random(rng, ALNUM, 34)
    return Token("hf_" + body, (body,))


def _hf_org(rng: random.Random) -> Token:
    body = _random(rng, ALNUM, 34)
    return Token("api_org_" + body, (body,))


def _github(rng: random.Random) -> Token:
    body = _random(rng, ALNUM, 36)
    return Token(f"gh{rng.choice('pousr')}_{body}", (body,))


def _github_pat(rng: random.Random) -> Token:
    body = _random(rng, ALNUM + "_", 82)
    return Token("github_pat_" + body, (body,))


def _aws_key(rng: random.Random) -> Token:
    body = _random(rng, UPPER_DIGITS, 16)
    return Token(rng.choice(["AKIA", "ASIA"]) + body, (body,))


def _jwt(rng: random.Random) -> Token:
    header = _b64url(b'{"alg":"HS256","typ":"JWT"}')
    subject = _random(rng, ALNUM, 16)
    payload = _b64url(json.dumps({"sub": subject, "iat": 1780000000}).encode())
    signature = _random(rng, B64URL, 43)
    return Token(f"{header}.{payload}.{signature}", (payload[8:], signature))


def _discord(rng: random.Random) -> Token:
    user = _b64url(str(rng.randrange(10**17, 10**19)).encode())
    middle = _random(rng, B64URL, 6)
    tail = _random(rng, B64URL, 38)
    return Token(f"{user}.{middle}.{tail}", (user, tail))


def _openai(rng: random.Random) -> Token:
    # an OpenAI-style key: the old ``sk-`` + 48 letters and digits, or a project key
    if rng.random() < 0.5:
        body = _random(rng, ALNUM, 48)
        return Token("sk-" + body, (body,))
    body = _random(rng, B64URL, 80)
    return Token("sk-proj-" + body, (body,))


def _authorization(rng: random.Random) -> Token:
    value = _random(rng, ALNUM, 40)
    return Token("Authorization: Bearer " + value, (value,), shaped=False)


def _env(rng: random.Random) -> Token:
    value = _random(rng, ALNUM, 32)
    return Token(
        f"{rng.choice(['OPENAI_API_KEY', 'WANDB_TOKEN', 'DB_PASSWORD'])}={value}", (value,), False
    )


def _cli(rng: random.Random) -> Token:
    value = _random(rng, ALNUM, 32)
    return Token(f"--{rng.choice(['api-key', 'hf-token', 'password'])} {value}", (value,), False)


def _url_password(rng: random.Random) -> Token:
    value = _random(rng, ALNUM, 24)
    return Token(f"postgres://app:{value}@db:5432/x", (value,), False)


def _aws_secret(rng: random.Random) -> Token:
    value = _random(rng, ALNUM + "/+", 40)
    return Token(f"AWS_SECRET_ACCESS_KEY={value}", (value,), False)


#: Every kind of secret, by name.
KINDS: dict[str, Callable[[random.Random], Token]] = {
    "hf": _hf,
    "hf-org": _hf_org,
    "github": _github,
    "github-pat": _github_pat,
    "aws-key": _aws_key,
    "jwt": _jwt,
    "discord": _discord,
    "openai": _openai,
    "authorization": _authorization,
    "env": _env,
    "cli": _cli,
    "url-password": _url_password,
    "aws-secret": _aws_secret,
}

# ----------------------------------------------------------------------- line contexts

_LEVELS = ["INFO", "WARNING", "ERROR", "DEBUG"]
_FILES = ["api_server.py", "utils.py", "core.py", "gpu_model_runner.py", "launcher.py"]


def _stamp(rng: random.Random) -> str:
    month, day = rng.randrange(1, 13), rng.randrange(1, 29)
    hour, minute, second = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    return f"{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"


def _vllm(rng: random.Random) -> str:
    who = rng.choice(
        ["", "(APIServer pid=1) ", "(EngineCore_DP0 pid=310) ", "(Worker_TP3 pid=352) "]
    )
    return (
        f"{who}{rng.choice(_LEVELS)} {_stamp(rng)} [{rng.choice(_FILES)}:{rng.randrange(1, 3000)}] "
    )


def _ansi(rng: random.Random) -> str:
    colour = rng.choice(["32", "33", "31;1", "36"])
    return (
        f"\x1b[{colour}m{rng.choice(_LEVELS)}\x1b[0m {_stamp(rng)} "
        f"\x1b[2m[{rng.choice(_FILES)}:{rng.randrange(1, 3000)}]\x1b[0m "
    )


def _pylog(rng: random.Random) -> str:
    return (
        f"2026-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d} "
        f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d},{rng.randrange(1000):03d}"
        f" - vllm.entrypoints.openai - {rng.choice(_LEVELS)} - "
    )


def _iso(rng: random.Random) -> str:
    return (
        f"2026-12-{rng.randrange(1, 29):02d}T{rng.randrange(24):02d}:{rng.randrange(60):02d}:"
        f"{rng.randrange(60):02d}.{rng.randrange(10**6):06d}Z [rank{rng.randrange(8)}]: "
    )


def _bare(rng: random.Random) -> str:
    return ""


_STYLES = [_vllm, _ansi, _pylog, _iso]


def _mixed(rng: random.Random) -> str:
    return rng.choice(_STYLES)(rng)


def _compose(rng: random.Random) -> str:
    # Docker Compose's service name, the same on every line, before what the service wrote
    return "vllm-1  | " + rng.choice([_vllm, _iso, _bare])(rng)


#: Line contexts: what each line of the log starts with (a fresh prefix each line:
#: timestamps and line numbers change; ``mixed`` changes the whole style per line).
CONTEXTS: dict[str, Callable[[random.Random], str]] = {
    "vllm": _vllm,
    "ansi": _ansi,
    "pylog": _pylog,
    "iso": _iso,
    "mixed": _mixed,
    "bare": _bare,
    "compose": _compose,
}
NEWLINES = {"lf": "\n", "crlf": "\r\n"}

# --------------------------------------------------------------------------- disguises


@dataclass
class Shown:
    """A disguised secret: the text of its line(s) after the prefix, and the noise."""

    text: str
    encoded: str = ""
    noise: list[str] = field(default_factory=list)
    breaks: bool = False


Disguise = Callable[[Token, random.Random, Callable[[], str], str], Shown]


def _plain(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    return Shown(token.text)


def _cuts(rng: random.Random, text: str, pieces: int, start: int = 1) -> list[str]:
    at = sorted(rng.sample(range(start, len(text)), pieces - 1))
    return [text[i:j] for i, j in zip([0, *at], [*at, len(text)], strict=True)]


def _value_start(token: Token) -> int:
    """Where the secret itself starts in the token's text (after ``NAME=`` and such)."""
    return token.text.index(token.private[0]) if not token.shaped else 1


def _prefixed_lines(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    pieces = _cuts(rng, token.text, rng.randint(2, 4), _value_start(token) + 1)
    prefixes = [prefix() for _ in pieces[1:]]
    text = "".join(p + nl + pre for p, pre in zip(pieces, prefixes, strict=False)) + pieces[-1]
    return Shown(text, noise=prefixes, breaks=True)


def _backslash(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    pieces = _cuts(rng, token.text, rng.randint(2, 3), _value_start(token) + 1)
    prefixes = [prefix() + rng.choice(["", "  ", "\t"]) for _ in pieces[1:]]
    text = "".join(p + "\\" + nl + pre for p, pre in zip(pieces, prefixes, strict=False))
    return Shown(text + pieces[-1], noise=["\\", *prefixes], breaks=True)


def _zero_width(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    chars = list(token.text)
    for _ in range(rng.randint(1, 4)):
        chars.insert(rng.randrange(1, len(chars)), rng.choice(INVISIBLE))
    return Shown("".join(chars))


def _fullwidth(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    every = rng.random() < 0.5
    text = "".join(
        chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and (every or rng.random() < 0.5) else c
        for c in token.text
    )
    return Shown(text)


def _look_alikes(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    # the first letters always (``һf_``, ``ghр_``, ``АKIА``), then others at random
    text = "".join(
        LOOK_ALIKES[c] if c in LOOK_ALIKES and (i < 4 or rng.random() < 0.3) else c
        for i, c in enumerate(token.text)
    )
    return Shown(text, noise=list(LOOK_ALIKES.values()))


def _combining(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    chars = list(token.text)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(1, len(chars))
        if chars[at - 1].isalnum():
            chars.insert(at, rng.choice(COMBINING))
    return Shown("".join(chars), noise=COMBINING)


def _base64(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    url = rng.random() < 0.5
    encoded = (base64.urlsafe_b64encode if url else base64.b64encode)(token.text.encode())
    text = encoded.decode().rstrip("=" if rng.random() < 0.5 else "")
    return Shown(text, encoded=text.rstrip("="))


def _base64_twice(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    inner = base64.b64encode(token.text.encode())
    text = base64.b64encode(inner).decode()
    return Shown(text, encoded=text.rstrip("="))


def _hex(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    text = token.text.encode().hex()
    text = text.upper() if rng.random() < 0.3 else text
    return Shown(text, encoded=text)


def _url_encoded(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    # what a query string or a form body carries: ``hf%5F...``, ``password%3D...``,
    # ``Authorization%3A%20Bearer%20...``; sometimes every character escaped
    if rng.random() < 0.25:
        text = "".join(f"%{b:02X}" for b in token.text.encode())
    else:
        text = urllib.parse.quote(token.text, safe="").replace("_", "%5F")
    return Shown("q=" + text, encoded=text)


def _json_escaped(token: Token, rng: random.Random, prefix: Callable[[], str], nl: str) -> Shown:
    # what Go's JSON encoder writes (docker inspect, kubectl): <, > and & as \u003c,
    # \u003e and \u0026 (.NET's quotes as \u0022), around the token or inside it
    escape = rng.choice(["\\u003c", "\\u0022", "\\u0026", "\\u0027"])
    text = token.text.replace("&", "\\u0026").replace("<", "\\u003c").replace('"', "\\u0022")
    return Shown(f"{escape}{text}{escape}", noise=[escape])


#: Every disguise, by name.
DISGUISES: dict[str, Disguise] = {
    "plain": _plain,
    "prefixed-lines": _prefixed_lines,
    "backslash": _backslash,
    "zero-width": _zero_width,
    "fullwidth": _fullwidth,
    "look-alikes": _look_alikes,
    "combining": _combining,
    "base64": _base64,
    "base64-twice": _base64_twice,
    "hex": _hex,
    "url-encoded": _url_encoded,
    "json-escaped": _json_escaped,
}

# ------------------------------------------------------------------------------- cases

_MESSAGES = [
    "Loading weights took 12.31 GB and 41.2 seconds",
    "Starting vLLM API server on http://0.0.0.0:8000",
    "Using FlashInfer backend for MLA attention",
    "Graph capturing finished in 14 secs, took 0.55 GiB",
    "Route: /v1/chat/completions, Methods: POST",
]
_LEADS = ["non-default args:", "env:", "request headers", "launching with", "got"]


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    disguise: str
    context: str
    newline: str
    log: str
    token: Token
    encoded: str
    noise: tuple[str, ...]
    #: True when the secret is broken over lines.
    breaks: bool


def case(kind: str, disguise: str, context: str, newline: str, seed: int = 0) -> Case:
    """One log: a few plain lines, the line with the secret, a few more."""
    ident = f"{kind}-{disguise}-{context}-{newline}-{seed}"
    rng = random.Random(ident)
    token = KINDS[kind](rng)
    style = CONTEXTS[context]
    nl = NEWLINES[newline]

    def prefix() -> str:
        return style(rng)

    shown = DISGUISES[disguise](token, rng, prefix, nl)
    before = [prefix() + rng.choice(_MESSAGES) for _ in range(rng.randint(1, 4))]
    after = [prefix() + rng.choice(_MESSAGES) for _ in range(rng.randint(1, 4))]
    # a broken secret ends its line; one on a line of its own is anywhere in it
    tail = "" if shown.breaks else rng.choice(["", " ok", ", retrying", " (200 OK)"])
    line = f"{prefix()}{rng.choice(_LEADS)} {shown.text}{tail}"
    log = nl.join([*before, line, *after])
    noise = tuple(shown.noise)
    return Case(
        ident, kind, disguise, context, newline, log, token, shown.encoded, noise, shown.breaks
    )


def corpus(seeds: int = 1) -> Iterator[Case]:
    """Every kind x disguise x context x newline (x ``seeds``)."""
    for seed in range(seeds):
        for kind in KINDS:
            for disguise in DISGUISES:
                for context in CONTEXTS:
                    for newline in NEWLINES:
                        yield case(kind, disguise, context, newline, seed)


# ------------------------------------------------------------------------------- leaks

_ESCAPE = re.compile(r"\\([^A-Za-z0-9\s])")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_WINDOW = 8


def _unmasked(text: str, noise: tuple[str, ...]) -> str:
    """``text`` as a reader would piece a secret back: the noise taken out, normalised,
    Markdown escapes removed, lines joined."""
    for bit in sorted(noise, key=len, reverse=True):
        if len(bit) > 1:
            text = text.replace(bit, "")
    text = _ANSI.sub("", text)
    text = unicodedata.normalize("NFKD", text)
    back = {v: k for k, v in LOOK_ALIKES.items()}
    text = "".join(
        back.get(c, c) for c in text if unicodedata.category(c) not in ("Cf", "Mn", "Me")
    )
    text = unicodedata.normalize("NFKC", text)
    text = _ESCAPE.sub(r"\1", text)
    return re.sub(r"\\?\r?\n[ \t]*", "", text)


def leaks(text: str, c: Case) -> list[str]:
    """What of ``c``'s secret ``text`` still shows (empty: nothing)."""
    found: list[str] = []
    views = (text, _unmasked(text, c.noise))
    for view in views:
        for part in c.token.private:
            for i in range(0, max(1, len(part) - _WINDOW + 1)):
                window = part[i : i + _WINDOW]
                if window in view:
                    found.append(window)
                    break
        if c.encoded:
            middle = c.encoded[len(c.encoded) // 3 : 2 * len(c.encoded) // 3]
            if len(middle) >= _WINDOW and middle in view:
                found.append(middle)
    return found
