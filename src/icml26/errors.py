"""Errors that reach the user as one line: what is wrong, and what is allowed."""


class Icml26Error(Exception):
    """Base class; ``str(err)`` is the one line a user sees."""


class ConfigError(Icml26Error):
    """A config value, key, paper, method, setting or seed that is not allowed."""


class ArtifactError(Icml26Error):
    """An artifact that is missing, truncated or not what its reader expects."""
