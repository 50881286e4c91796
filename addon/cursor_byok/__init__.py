"""cursor-byok: run Cursor's Agent on your own LLM provider and key."""

__version__ = "0.1.0"
