"""Checks of a help request's launch settings against rules kept as data and the wiki.

- :mod:`~knowledge.triage.rules.schema`: the rule files' schema (pydantic) and
  :class:`Rule`;
- :mod:`~knowledge.triage.rules.subject`: what a rule looks at (:class:`Subject`) and
  settings as stated in a request;
- :mod:`~knowledge.triage.rules.checks`: the coded checks against the wiki;
- :mod:`~knowledge.triage.rules.engine`: loading, binding to a wiki, evaluating.

The rule files themselves (``*.yaml``) live in this folder.
"""

from knowledge.triage.rules.checks import (
    CHECKS,
    Evidence,
    RuleHit,
    SpecLimit,
    compare_image_tags,
    find_pinned_values,
    unstable_limits,
)
from knowledge.triage.rules.engine import BoundRules, Finding, RuleSet
from knowledge.triage.rules.schema import SEVERITIES, Condition, Rule, RuleError
from knowledge.triage.rules.subject import (
    PageMemo,
    Settings,
    Stated,
    Subject,
    launch_settings,
    parse_stated,
    stated_settings,
)

__all__ = [
    "CHECKS",
    "SEVERITIES",
    "BoundRules",
    "Condition",
    "Evidence",
    "Finding",
    "PageMemo",
    "Rule",
    "RuleError",
    "RuleHit",
    "RuleSet",
    "Settings",
    "SpecLimit",
    "Stated",
    "Subject",
    "compare_image_tags",
    "find_pinned_values",
    "launch_settings",
    "parse_stated",
    "stated_settings",
    "unstable_limits",
]
