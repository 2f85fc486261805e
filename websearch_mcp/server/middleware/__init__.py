"""The checks in front of every request, one concern per module: who may call (`security`),
how much (`rate_limits`), slow clients (`slow_clients`), request bodies (`body_limit`), and
`guard`, the one ASGI middleware that applies them in order."""
