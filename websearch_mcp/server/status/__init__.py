"""The status page: each engine's state now and its last hour, and the service's figures.

`search.activity` keeps the hour (fed by the fan-out and the service), `shared` lets the workers
of one server read each other's hour, `report` gathers everything as `/status.json` says it,
`page` renders it as HTML and `table` as text for a terminal.
"""
