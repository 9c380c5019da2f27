"""Triage of help requests: what a good helper would say in the first minute.

- :mod:`~knowledge.triage.request`: the request, read from a mapping or a file, capped;
- :mod:`~knowledge.triage.redact`: secrets removed before anything reads the request;
- :mod:`~knowledge.triage.logs`, :mod:`~knowledge.triage.known_errors`: the log read,
  and the wiki's known errors found in it;
- :mod:`~knowledge.triage.family`: which model family the request is about;
- :mod:`~knowledge.triage.rules`: launch rules kept as data, and checks against the wiki;
- :mod:`~knowledge.triage.onboarding`: the wiki's checklist, item by item;
- :mod:`~knowledge.triage.suggest`, :mod:`~knowledge.triage.confidence`: pages to read;
- :mod:`~knowledge.triage.engine`: the run that ties them (:func:`triage`).

``knowledge.answers.triage`` words a result as a reply. Names here are imported on
first use (PEP 562), so reading a request file does not load the rule engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.lazy import lazy_exports

if TYPE_CHECKING:
    from knowledge.triage.confidence import CONFIDENCES
    from knowledge.triage.engine import TriageContext, TriageResult, triage
    from knowledge.triage.request import FIELDS, RequestError, RequestReader, TriageRequest
    from knowledge.triage.suggest import Suggestion

__all__ = [
    "CONFIDENCES",
    "FIELDS",
    "RequestError",
    "RequestReader",
    "Suggestion",
    "TriageContext",
    "TriageRequest",
    "TriageResult",
    "triage",
]

#: public name -> the module that defines it
_WHERE = {
    "CONFIDENCES": "knowledge.triage.confidence",
    "FIELDS": "knowledge.triage.request",
    "RequestError": "knowledge.triage.request",
    "RequestReader": "knowledge.triage.request",
    "Suggestion": "knowledge.triage.suggest",
    "TriageContext": "knowledge.triage.engine",
    "TriageRequest": "knowledge.triage.request",
    "TriageResult": "knowledge.triage.engine",
    "triage": "knowledge.triage.engine",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
