"""Container image references, and the patterns that find images, digests and models.

``parse_image`` splits ``[registry[:port]/]repository[:tag][@digest]``; the other
helpers find an image word on a line of a compose file or an env file, a sha256
digest, and the ``org/name`` of a model in a Hugging Face cache path. They are the
one home of these patterns for the launch parser, the runbook catalogue and triage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "HF_CACHE_RE",
    "IMAGE_ENGINE_HINTS",
    "SHA256_DIGEST_RE",
    "ImageRef",
    "compose_image_word",
    "engine_of_image",
    "env_image_word",
    "hf_cache_repo",
    "image_default",
    "parse_image",
]

#: Image-name fragments -> engine, checked in this order.
IMAGE_ENGINE_HINTS: Final = (
    ("sglang", "sglang"),
    ("vllm", "vllm"),
    ("tensorrt-llm", "other"),
    ("tritonserver", "other"),
    ("text-generation-inference", "other"),
    ("llama.cpp", "other"),
    ("llama-cpp", "other"),
    ("lmdeploy", "other"),
    ("ollama", "other"),
)

_DIGEST_RE: Final = re.compile(r"[A-Za-z0-9_+.-]+:[0-9a-fA-F]{32,}")
_REPO_RE: Final = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")
_TAG_RE: Final = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_HOST_RE: Final = re.compile(r"[A-Za-z0-9.-]+(?::[0-9]+)?")
#: A Hugging Face cache folder name: ``models--org--name``.
HF_CACHE_RE: Final = re.compile(r"models--([^/]+?)--([^/]+)")
#: A sha256 image digest as registries print it.
SHA256_DIGEST_RE: Final = re.compile(r"sha256:[0-9a-f]{64}")
#: ``image: ref`` in a compose file.
_COMPOSE_IMAGE_RE: Final = re.compile(r"^\s*image:\s*[\"']?(.+?)[\"']?\s*$")
#: ``IMAGE=ref`` / ``export VLLM_IMAGE=ref`` in a shell or env file.
_ENV_IMAGE_RE: Final = re.compile(r"^\s*(?:export\s+)?[A-Z_]*IMAGE[A-Z_]*=[\"']?([^\s\"']+)")
#: ``${VAR:-default}`` written in place of an image.
_DEFAULT_REF_RE: Final = re.compile(r"^\$\{[A-Za-z_]+:?-(.+)\}$")


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A container image reference ``[registry/]repository[:tag][@digest]``."""

    raw: str
    registry: str | None
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def name(self) -> str:
        """Last path component of the repository (``vllm`` in ``voipmonitor/vllm``)."""
        return self.repository.rsplit("/", 1)[-1]


def parse_image(ref: str) -> ImageRef | None:
    """Split ``[registry[:port]/]repository[:tag][@digest]``; None when not an image."""
    raw = ref.strip()
    if not raw or "$" in raw or any(c.isspace() for c in raw) or len(raw) > 512:
        return None
    name, _, digest = raw.partition("@")
    if digest and not _DIGEST_RE.fullmatch(digest):
        return None
    first, slash, rest = name.partition("/")
    registry = None
    path = name
    if slash and ("." in first or ":" in first or first == "localhost"):
        if not _HOST_RE.fullmatch(first):
            return None
        registry, path = first, rest
    tag = None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, _, tag = path.rpartition(":")
        if not _TAG_RE.fullmatch(tag):
            return None
    if not path or not all(_REPO_RE.fullmatch(part) for part in path.split("/")):
        return None
    return ImageRef(raw, registry, path, tag, digest or None)


def engine_of_image(image: ImageRef | None) -> str | None:
    if image is None:
        return None
    name = image.repository.lower()
    return next((engine for hint, engine in IMAGE_ENGINE_HINTS if hint in name), None)


def hf_cache_repo(text: str) -> str | None:
    """``org/name`` of the first Hugging Face cache folder named in ``text``, or None."""
    m = HF_CACHE_RE.search(text)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def compose_image_word(line: str) -> str | None:
    """The image of an ``image:`` line of a compose file, as written."""
    m = _COMPOSE_IMAGE_RE.match(line)
    return m.group(1) if m else None


def env_image_word(line: str) -> str | None:
    """The image of an ``...IMAGE...=ref`` assignment line, as written."""
    m = _ENV_IMAGE_RE.match(line)
    return m.group(1) if m else None


def image_default(ref: str) -> str:
    """The default of a ``${VAR:-default}`` reference; any other ``ref`` unchanged."""
    m = _DEFAULT_REF_RE.match(ref)
    return m.group(1) if m else ref
