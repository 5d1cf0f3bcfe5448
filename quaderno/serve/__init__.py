"""`quaderno serve`: an HTTP API, an OpenAI-compatible face and an MCP server over quaderno.

See ``docs/serve.md``. Import :func:`create_app` from :mod:`quaderno.serve.app` (this package
imports nothing heavy by itself, so ``quaderno`` works without the ``serve`` extra).
"""
