"""Generators in other processes, reached over HTTP (an OpenAI-compatible server)."""
