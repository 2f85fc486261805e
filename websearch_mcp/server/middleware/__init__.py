"""The checks in front of every request, one concern per module: Host and Origin
(`origin_host`), who is calling (`auth`), which addresses may be served without tokens
(`exposure`), how much a client may ask (`rate_limits`), slow clients (`slow_clients`) and
request bodies (`body_limit`); `guard` is the one ASGI middleware that applies them in order."""
