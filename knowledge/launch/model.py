"""What a pasted launch says: one typed ``Launch``, with its ``Parallelism``.

``Parallelism`` (tensor, decode-context, data and pipeline parallel sizes and
speculative decoding) is the one type for these settings: a launch, a server log and
a help request each state them, and triage compares them field by field.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Final, Literal

from knowledge.launch.images import ImageRef, hf_cache_repo

__all__ = ["LAUNCH_KINDS", "PARALLEL_FIELDS", "Gpus", "Launch", "Parallelism"]

LAUNCH_KINDS: Final = ("docker-run", "compose", "vllm-serve", "sglang", "env-file", "unknown")

Gpus = tuple[int, ...] | Literal["all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Parallelism:
    """How a server is split over GPUs and whether it decodes speculatively.

    ``None`` means not stated. A launch, a server log's summary and a help request's
    stated settings are each a ``Parallelism``, so these fields are declared once and
    compared by name.
    """

    tp: int | None = None
    dcp: int | None = None
    dp: int | None = None
    pp: int | None = None
    spec_method: str | None = None
    #: Speculative tokens; 0 when speculative decoding is explicitly off.
    spec_tokens: int | None = None

    def parallel_settings(self) -> dict[str, int | str | None]:
        """The parallel settings alone, by field name (``{"tp": 8, "dcp": None, ...}``)."""
        return {name: getattr(self, name) for name in PARALLEL_FIELDS}


#: The names of ``Parallelism``'s fields, in order.
PARALLEL_FIELDS: Final = tuple(f.name for f in fields(Parallelism))


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch(Parallelism):
    """Everything read from one pasted launch. Fields not found are ``None`` or empty."""

    kind: str
    image: ImageRef | None = None
    model: str | None = None
    served_model_name: str | None = None
    #: ``"vllm"``, ``"sglang"``, ``"other"`` or None, from the command, image or env.
    engine: str | None = None
    #: True for ``--enable-expert-parallel``; a size for ``--ep N``.
    ep: bool | int | None = None
    gpus: Gpus | None = None
    gpu_count: int | None = None
    #: Every assignment seen: exports, ``VAR=x cmd``, ``-e``, compose environment.
    env: dict[str, str] = field(default_factory=dict)
    #: Engine flags, keys without dashes (``tensor-parallel-size``); bare flags are True.
    flags: dict[str, str | bool] = field(default_factory=dict)
    hf_overrides: dict[str, object] | None = None
    #: The engine command's words after expansion (``vllm serve MODEL ...``); without
    #: one, the container's command (entrypoint + command), e.g. a wrapper script.
    command: tuple[str, ...] = ()
    #: ``docker run`` options other than env, volumes and name (``gpus``, ``ipc`` ...), or
    #: a compose service's other scalar keys (``network-mode``, ``shm-size`` ...).
    runtime_flags: dict[str, str | bool] = field(default_factory=dict)
    container_name: str | None = None
    volumes: tuple[str, ...] = ()
    env_files: tuple[str, ...] = ()
    #: The compose service read, when there were several.
    service: str | None = None
    problems: tuple[str, ...] = ()

    @property
    def hf_model_id(self) -> str | None:
        """``org/name`` of the model: from a Hugging Face cache path or an id itself."""
        if not self.model:
            return None
        cached = hf_cache_repo(self.model)
        if cached:
            return cached
        parts = self.model.split("/")
        if len(parts) == 2 and all(parts) and not self.model.startswith((".", "~", "$")):
            return self.model
        return None
