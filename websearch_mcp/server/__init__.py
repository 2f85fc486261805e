"""How requests arrive: the app, the MCP endpoint and its tools, the SearXNG API, stdio,
workers, observability, and the middleware in front of them."""
