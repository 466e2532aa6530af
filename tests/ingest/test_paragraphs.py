"""Paragraph breaks put back into a PDF page's lines (ingest.paragraphs)."""

from __future__ import annotations

from ingest.paragraphs import mark_paragraphs
from ingest.readers import clean_pdf_text

FULL = "x" * 60  # fills a line: the page's full width comes from lines like it

CONTRACT_PAGE = "\n".join(
    [
        "(b) Consultant shall keep all Confidential Information confidential, and shall",
        "not disclose, disseminate, publish, reproduce or use Confidential Information",
        "except to perform the Services described in the Statement of Work attached.",
        "cooperate in Aduro's efforts.",
        "(c) On Aduro's request, or upon the termination or expiration of this Agreement,",
        "Consultant shall immediately stop using Confidential Information and return all",
        "RECITALS",
        "Accuray manufactures and sells radiosurgery systems using image-guided robotics,",
        "including the CyberKnife System, which is cleared in the United States to treat.",
        "Accuray relies on qualified distributors to market and distribute its products.",
    ]
)


def test_a_short_line_that_ends_a_sentence_before_a_new_block_ends_its_paragraph() -> None:
    out = mark_paragraphs(CONTRACT_PAGE)
    assert "cooperate in Aduro's efforts.\n\n(c) On Aduro's request" in out
    assert "RECITALS\n\nAccuray manufactures" in out  # a heading in capitals stands alone
    # a line filling the width that ends a sentence goes on into the next line's paragraph
    assert "cleared in the United States to treat.\nAccuray relies" in out
    # lines that do not end a sentence are the same paragraph
    assert "shall\nnot disclose" in out
    assert out.replace("\n\n", "\n") == CONTRACT_PAGE  # nothing but breaks added


def test_table_rows_chinese_and_short_pages_are_left_as_they_are() -> None:
    table = "\n".join(
        [
            "Consolidated Statements of Cash Flows for the years ended December 31, 2022",
            "Net income 5,777 5,921 4,570",
            "Depreciation and amortization 1,488 1,544 1,474",
            "Purchases of property, plant and equipment (1,749) (1,613) (1,577)",
            "Net cash provided by operating activities 7,084 6,842 6,954",
            "Dividends paid to shareholders (3,369) (3,420) (3,388)",
            "Net cash used in financing activities (4,573) (5,214) (4,271)",
        ]
    )
    assert mark_paragraphs(table) == table
    lines = ["报告期内，公司向爱康实业销售产品和采购货物，交易如下：", "单位：万元。", "2009年度采购金额为37.08万元。"]
    chinese = "\n".join(lines * 3)
    assert mark_paragraphs(chinese) == chinese
    short = "Short page.\nTwo lines."
    assert mark_paragraphs(short) == short


def test_clean_pdf_text_marks_paragraphs() -> None:
    page = "\n".join([FULL, FULL, "ends here.", "Next paragraph starts " + "y" * 38, FULL, FULL])
    assert "ends here.\n\nNext paragraph" in clean_pdf_text(page)
