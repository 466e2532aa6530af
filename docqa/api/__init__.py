"""docqa's REST API (FastAPI): create_app() in docqa.api.main."""
