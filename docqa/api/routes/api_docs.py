"""The interactive API page at /docs, its scripts and styles served by docqa itself.

FastAPI's own /docs loads Swagger UI from a CDN, so offline (docqa's usual place: a box without the
internet) it was a blank page. Here the same page loads the copy in the `swagger-ui-bundle` wheel.
ReDoc, which has no such copy, is left out.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

ASSETS = "/docs-assets"


def mount(app: FastAPI, openapi_url: str) -> None:
    app.mount(ASSETS, StaticFiles(directory=swagger_ui_path), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title="docqa API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon-32x32.png",
        )
