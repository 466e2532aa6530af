"""The interactive API page at /docs, its scripts and styles served by docqa itself.

FastAPI's own /docs loads Swagger UI from a CDN, so offline (docqa's usual place: a box without the
internet) it was a blank page. Here the same page loads the copy in the `fastapi-offline` wheel: Swagger
UI 5, which reads the OpenAPI 3.1 document FastAPI writes (the `swagger-ui-bundle` wheel's 4.15.5 said
"Unable to render this definition"; a test renders the page in Chromium). ReDoc is left out.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"


def mount(app: FastAPI, openapi_url: str) -> None:
    import fastapi_offline  # its static files only (Swagger UI's), found where the wheel put them

    static = Path(fastapi_offline.__file__).parent / "static"
    app.mount(ASSETS, StaticFiles(directory=static), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title="docqa API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
        )
