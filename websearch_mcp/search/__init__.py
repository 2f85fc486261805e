"""One search, end to end: the service, single-flight, the fan-out to the engines, reading pages
and summaries."""
