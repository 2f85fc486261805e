"""Fakes and helpers shared by the test suite (`tests/`) and the benchmarks (`bench/`).

Fake engines, academic indexes and LLM endpoints serving real wire formats on 127.0.0.1, local
web sites, a redis-server, hostile documents, the judged collections with their retrieval models,
and where the recorded fixtures live. Both `tests/` and `bench/` import from here; this package
imports neither of them.
"""
