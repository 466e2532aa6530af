"""OpenDocument files (.odt, .ods, .odp) written by the tests as LibreOffice writes them: a ZIP whose first,
stored member is the mimetype, a manifest, and the content in content.xml (no blobs, no office suite)."""

from __future__ import annotations

import zipfile
from pathlib import Path

_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
    'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"'
)
_MIME = {
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
}


def odf_file(path: Path, body: str, styles: str = "") -> Path:
    """A package holding `body` (the office:body's child, XML) and automatic `styles`."""
    mime = _MIME[path.suffix]
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content {_NS} office:version="1.3">'
        f"<office:automatic-styles>{styles}</office:automatic-styles><office:body>{body}</office:body>"
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
        'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">'
        f'<manifest:file-entry manifest:full-path="/" manifest:media-type="{mime}"/>'
        '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
    )
    with zipfile.ZipFile(path, "w") as package:
        package.writestr("mimetype", mime, compress_type=zipfile.ZIP_STORED)
        package.writestr("META-INF/manifest.xml", manifest, compress_type=zipfile.ZIP_DEFLATED)
        package.writestr("content.xml", content, compress_type=zipfile.ZIP_DEFLATED)
    return path


def odt_file(path: Path) -> Path:
    """Two pages: LibreOffice's soft break, then a style's hard break; headings, a list, a table, a note."""
    styles = (
        '<style:style style:name="P9" style:family="paragraph">'
        '<style:paragraph-properties fo:break-before="page"/></style:style>'
    )
    body = (
        "<office:text>"
        '<text:h text:outline-level="1">Master Services Agreement</text:h>'
        '<text:p>The<text:s/>Supplier shall<text:s text:c="2"/>deliver'
        "<text:note><text:note-body><text:p>a footnote</text:p></text:note-body></text:note> monthly.</text:p>"
        "<text:list><text:list-item><text:p>Fees are due in 30 days.</text:p></text:list-item></text:list>"
        '<text:h text:outline-level="2">Liability</text:h>'
        "<text:p>Liability is capped<text:soft-page-break/> at twice the annual fees.</text:p>"
        '<table:table table:name="Fees"><table:table-row>'
        "<table:table-cell><text:p>Service</text:p></table:table-cell>"
        "<table:table-cell><text:p>Fee (EUR)</text:p></table:table-cell></table:table-row>"
        "<table:table-row><table:table-cell><text:p>Hosting</text:p></table:table-cell>"
        "<table:table-cell><text:p>12,000</text:p></table:table-cell></table:table-row></table:table>"
        '<text:p text:style-name="P9">Schedule 1: the governing law is that of Portugal.</text:p>'
        "</office:text>"
    )
    return odf_file(path, body, styles)


def ods_file(path: Path) -> Path:
    """Two sheets; the second ends as a saved sheet does, in a million empty repeated rows and columns."""
    cell = '<table:table-cell office:value-type="string"><text:p>{}</text:p></table:table-cell>'
    body = (
        '<office:spreadsheet><table:table table:name="Revenue">'
        f"<table:table-row>{cell.format('Year')}{cell.format('Revenue')}</table:table-row>"
        f"<table:table-row>{cell.format('2023')}{cell.format('4,120')}</table:table-row></table:table>"
        '<table:table table:name="Assumptions"><table:table-row table:number-rows-repeated="3">'
        f"{cell.format('Growth')}{cell.format('3%')}"
        '<table:table-cell table:number-columns-repeated="16382"/></table:table-row>'
        '<table:table-row table:number-rows-repeated="1048573">'
        '<table:table-cell table:number-columns-repeated="16384"/></table:table-row></table:table>'
        "</office:spreadsheet>"
    )
    return odf_file(path, body)


def odp_file(path: Path) -> Path:
    """Two slides: a title, text and speaker notes, then a table."""
    body = (
        '<office:presentation><draw:page draw:name="page1">'
        '<draw:frame presentation:class="title"><draw:text-box><text:p>Q3 review</text:p></draw:text-box></draw:frame>'
        '<draw:frame presentation:class="outline"><draw:text-box><text:p>Brno shipped 2,340 robots.</text:p>'
        "</draw:text-box></draw:frame><presentation:notes><draw:frame><draw:text-box>"
        "<text:p>Say the Graz figure too.</text:p></draw:text-box></draw:frame></presentation:notes></draw:page>"
        '<draw:page draw:name="page2"><draw:frame><table:table><table:table-row>'
        "<table:table-cell><text:p>Plant</text:p></table:table-cell>"
        "<table:table-cell><text:p>Units</text:p></table:table-cell></table:table-row><table:table-row>"
        "<table:table-cell><text:p>Graz</text:p></table:table-cell>"
        "<table:table-cell><text:p>1,105</text:p></table:table-cell></table:table-row></table:table>"
        "</draw:frame></draw:page></office:presentation>"
    )
    return odf_file(path, body)
