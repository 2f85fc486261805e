"""websearch-mcp: one search tool for agents, fused from many engines."""

__version__ = "0.1.0"
