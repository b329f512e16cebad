"""netmodel: alpha-beta collective costs over fabric graphs, cluster scenarios and the CLI."""

__version__ = "0.1.0"
