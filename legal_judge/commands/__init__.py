"""Click commands, one module per area; ``cli.py`` registers every module's ``COMMANDS``."""
