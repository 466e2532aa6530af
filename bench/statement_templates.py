"""The questions of bench/statement_questions.py: per statement, metrics from its standard captions
(Regulation S-X Article 5, ASC 230) and the textbook measures read from it, each in an analyst's words.
Written before any was scored. Set M's misses may be read while mending; set N (other captions, other
phrasings) is held out until the mending is done. Metrics that another section states as much as the
statement (dividends and buybacks: Item 5; segment revenue: the segment note) are left out."""

from __future__ import annotations

MENDED_ON: dict[str, tuple[str, ...]] = {
    "balance_sheet": (
        "What were {co}'s total assets at the end of {period}?",
        "How much goodwill did {co} carry on its books as of {period}?",
        "What were {co}'s inventories at the end of {period}?",
        "What was {co}'s total stockholders' equity as of {period}?",
        "How much long-term debt did {co} have outstanding at the end of {period}?",
        "What were {co}'s accrued liabilities at the end of {period}?",
    ),
    "income_statement": (
        "What was {co}'s total revenue in {period}?",
        "How much did {co} spend on research and development in {period}?",
        "What was {co}'s diluted earnings per share for {period}?",
        "What was {co}'s provision for income taxes in {period}?",
        "What was {co}'s operating income in {period}?",
        "How much interest expense did {co} report for {period}?",
    ),
    "cash_flow_statement": (
        "How much cash did {co} generate from operating activities in {period}?",
        "What were {co}'s capital expenditures in {period}?",
        "How much stock-based compensation did {co} add back to net income in {period}?",
        "What was {co}'s net cash used in investing activities in {period}?",
        "How much debt did {co} repay in {period}?",
        "What was {co}'s depreciation and amortization in {period}?",
    ),
}

HELD_OUT: dict[str, tuple[str, ...]] = {
    "balance_sheet": (
        "What was {co}'s cash and cash equivalents balance at the end of {period}?",
        "How large were {co}'s accounts receivable, net, as of the end of {period}?",
        "What were {co}'s total current liabilities at the end of {period}?",
        "How much retained earnings did {co} report as of {period}?",
        "What was the carrying value of {co}'s property, plant and equipment, net, at the end of {period}?",
        "What were {co}'s total liabilities as of {period}?",
    ),
    "income_statement": (
        "What was {co}'s gross profit in {period}?",
        "How much were {co}'s selling, general and administrative expenses in {period}?",
        "What net income did {co} report for {period}?",
        "What was {co}'s cost of sales in {period}?",
        "How many diluted shares did {co} use to compute earnings per share in {period}?",
        "What was {co}'s income before income taxes in {period}?",
    ),
    "cash_flow_statement": (
        "What was {co}'s free cash flow in {period}?",
        "What was {co}'s net cash provided by financing activities in {period}?",
        "How much did {co} spend on acquisitions, net of cash acquired, in {period}?",
        "What was the net change in {co}'s cash during {period}?",
        "How much new long-term debt did {co} issue in {period}?",
        "How much did changes in working capital add to or take from {co}'s operating cash flow in {period}?",
    ),
}

STATEMENT_SETS = {"M": MENDED_ON, "N": HELD_OUT}
