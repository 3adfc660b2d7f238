"""Executors: where per-model units run (this process, a child process each, Ray workers); see :mod:`.base`."""
