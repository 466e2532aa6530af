"""The web page at / and its static files (docqa/web: HTML, CSS and plain JavaScript, no build step)."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

WEB_DIR = Path(__file__).resolve().parents[2] / "web"


def mount(app: FastAPI) -> None:
    app.mount("/static", StaticFiles(directory=WEB_DIR), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(WEB_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:
        """The page's icon where a browser asks for it by its old name (every load was a 404 in the log)."""
        return FileResponse(
            WEB_DIR / "favicon.svg", media_type="image/svg+xml", headers={"Cache-Control": "max-age=86400"}
        )
