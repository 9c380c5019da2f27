"""Support intake without Discord: the form from the onboarding checklist, drafts,
tickets and their store. See :mod:`knowledge.intake.desk`."""

__all__: list[str] = []
