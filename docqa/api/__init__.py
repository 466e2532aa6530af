"""docqa's REST and OpenAI APIs (FastAPI): create_app() in docqa.api.main, `docqa serve` in docqa.api.server."""
