"""Cooldowns of keys and circuit breakers: the interface and its stores (in memory, one SQLite
file for the workers of one server, Redis for replicas), and recent reads kept for a moment."""
