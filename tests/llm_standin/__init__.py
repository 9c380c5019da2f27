"""A loopback stand-in of an OpenAI-compatible model server (see ``server.py``)."""

from .server import Behaviour, LlmStandin, closed_port_url, counts, made_up_answer, waits_for

__all__ = ["Behaviour", "LlmStandin", "closed_port_url", "counts", "made_up_answer", "waits_for"]
