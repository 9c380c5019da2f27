"""One extension package per area: ``__init__`` holds ``setup``, ``_cog`` the commands."""
