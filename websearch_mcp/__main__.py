"""`python -m websearch_mcp`: the same command line as `websearch-mcp`."""

from websearch_mcp.cli import main

raise SystemExit(main())
