"""Which financial statement a question needs, so the passages under that statement's heading rank first.

A filing's numbers sit in its statements (balance sheet, income statement, cash flow statement), but a
question names the metric, not the table: "capital expenditure" is the cash flow statement's "purchases of
property, plant and equipment", "quick ratio" is read from the balance sheet, "operating margin" from the
income statement. BM25 then prefers the discussion that repeats the question's words (MD&A, notes) to the
page holding the number (financebench_dev, the question's own filing: 14 of the 23 misses at 3 were a
statement page). Here a question's statement is read from the statement it names or from the metrics it
asks about, by the metrics' standard definitions; the store's search (docqa.store.keyword.passage_bm25) then adds a
bonus to the passages whose headings are that statement's title ("Consolidated Statements of Cash Flows").

A Chinese company's profile sections are the same kind of thing, and the Chinese filings profile's
(docqa.profiles.csrc.sections).

Pure functions of the question's text.
"""

from __future__ import annotations

import re

from docqa.core.query import Titles
from docqa.profiles.matching import asking_pattern

BALANCE_SHEET = ("balance sheet", "statement of financial position", "statement of financial condition")
INCOME_STATEMENT = ("statement of income", "statement of operations", "statement of earnings", "income statement")
CASH_FLOW_STATEMENT = ("statement of cash flows", "cash flow statement")

# Ratios that read a balance-sheet line against an income-statement line, by their textbook definitions
# (turnover ratios, leverage against earnings, returns on capital): each names both statements.
_TWO_STATEMENT_RATIOS = (
    r"|(?:fixed[- ])?asset turnover|inventory turnover|receivables? turnover|payables? turnover"
    r"|debt[- ]to[- ]ebitda|leverage ratio|return on (?:invested )?capital|return on capital employed|roic|roce"
)

# The statements' standard captions as the rules lay them out (Regulation S-X Rule 5-02 for the balance
# sheet, 5-03 for the income statement, ASC 230's three sections and their usual lines for cash flows) and
# as analysts shorten them: a question naming one asks for that statement's line.
_BALANCE_SHEET_CAPTIONS = (
    r"|goodwill|intangible assets|accrued (?:liabilities|expenses)|prepaid expenses"
    r"|other current (?:assets|liabilities)|marketable securities|short[- ]term (?:investments|borrowings|debt)"
    r"|current portion of (?:long[- ]term )?debt"
    r"|commercial paper|total liabilities|retained earnings|accumulated deficit|additional paid[- ]in capital"
    r"|treasury (?:stock|shares)|accumulated other comprehensive|noncontrolling interests?|deferred revenues?"
    r"|notes payable|operating lease liabilit(?:y|ies)|total equity"
)
_INCOME_STATEMENT_CAPTIONS = (
    r"|research and development|r&d|selling,? general,? and administrative|provision for income taxes"
    r"|income tax (?:expense|provision)|income taxes|(?:income|earnings) before (?:income )?taxes"
    r"|pre-?tax (?:income|profit)|cost of products sold|total revenues?|other income|non-?operating (?:income|expense)"
    r"|(?:income|earnings) from continuing operations|discontinued operations|diluted shares"
    r"|weighted[- ]average shares"
)
# Other industries' statements put other captions first: a bank's (Regulation S-X Article 9: Rules 9-03
# and 9-04), an insurer's (Article 7: Rules 7-03 and 7-04) and a utility's (its regulated plant and the
# regulatory assets beside it). Plurals only where a contract's singular ("a security deposit", "the
# premium") names no statement's line.
_OTHER_INDUSTRIES_BALANCE_SHEET = (
    r"|loans|(?:total |customer |interest[- ]bearing |noninterest[- ]bearing )?deposits"
    r"|allowance for (?:loan|credit|loan and lease) losses|federal funds sold"
    r"|securities purchased under (?:agreements to )?resell|trading (?:account )?assets|investment securities"
    r"|held[- ]to[- ]maturity|card ?member (?:loans|receivables)|future policy benefits"
    r"|(?:reserves for |liability for )?unpaid (?:claims|losses)|policyholder (?:funds|account balances)"
    r"|utility plant|regulatory (?:assets|liabilities)"
)
_OTHER_INDUSTRIES_INCOME_STATEMENT = (
    r"|net interest income|interest income|non-?interest (?:income|expenses?|revenues?)"
    r"|provision for (?:loan|credit|loan and lease) losses|efficiency ratio"
    r"|premiums(?: earned| written)?|policyholder benefits|(?:losses and )?loss adjustment expenses"
    r"|benefits? (?:costs|expenses)"
)
_CASH_FLOW_CAPTIONS = (
    r"|operating activities|investing activities|financing activities|stock[- ]based compensation"
    r"|share[- ]based compensation|repay|repaid|repayments? of (?:long[- ]term )?(?:debt|borrowings)|debt repayments?"
    r"|proceeds from (?:the )?(?:issuance of )?(?:long[- ]term )?(?:debt|borrowings|notes)|net of cash acquired"
    r"|purchases of (?:investments|marketable securities)|net (?:increase|decrease|change) in cash"
    r"|cash paid for (?:interest|income taxes)|changes in (?:operating assets and liabilities|working capital)"
)

# What each statement reports, as questions name it: the statement itself, its lines, and the ratios
# whose standard definitions read them. A ratio of two statements' lines (return on assets, days payable)
# names both. Capital intensity reads capital spending (cash flows) against the assets that carry it (balance
# sheet); a payout ratio, dividends paid against net income.
_ASKS = {
    BALANCE_SHEET: (
        r"(?<!off-)(?<!off )balance sheets?|statements? of financial (?:position|condition)|working capital|quick ratio"
        r"|current ratio"
        r"|current assets|current liabilities|inventor(?:y|ies)|accounts payable|accounts receivable|total assets"
        r"|pp&e|property,? plant,? and equipment|fixed assets?|cash and cash equivalents|shareholders'? equity"
        r"|stockholders'? equity|debt[- ]to[- ]equity|total debt|net debt|days payable|dpo|days sales|dso"
        r"|days inventory|dio|cash conversion cycle|return on (?:assets|equity)|roa|roe|asset turnover|book value"
        + _TWO_STATEMENT_RATIOS
        + r"|cash ratio|long[- ]term debt|capital[- ]intensi(?:ve|ty)|operating cash flow ratio"
        + _BALANCE_SHEET_CAPTIONS
        + _OTHER_INDUSTRIES_BALANCE_SHEET
    ),
    INCOME_STATEMENT: (
        r"income statements?|statements? of (?:income|operations|earnings)|p&l|profit and loss|revenues?"
        r"|net sales|operating income|operating margin|operating profit|gross margin|gross profit|net income"
        r"|net profit|net earnings|ebit|ebitda|earnings per share|eps|cost of (?:goods sold|sales|revenue)|cogs"
        r"|sg&a|effective tax rate|interest expense|interest coverage|days payable|dpo|days sales|dso"
        r"|days inventory|dio|cash conversion cycle|return on (?:assets|equity)|roa|roe|asset turnover"
        + _TWO_STATEMENT_RATIOS
        + r"|net (?:profit )?margin|ebitda margin|dividend payout(?: ratio)?|payout ratio"
        + _INCOME_STATEMENT_CAPTIONS
        + _OTHER_INDUSTRIES_INCOME_STATEMENT
    ),
    CASH_FLOW_STATEMENT: (
        r"cash flow statements?|statements? of cash flows?|capital expenditures?|capex|free cash ?flow|fcf"
        r"|cash (?:flow )?from operations|operating cash flow|cash flows? from operating|depreciation and amortization"
        r"|d&a|dividends paid|repurchases? of (?:common )?stock|share repurchases?|buybacks?|purchases of property"
        r"|capital[- ]intensi(?:ve|ty)|dividend payout(?: ratio)?|payout ratio|operating cash flow ratio"
        + _CASH_FLOW_CAPTIONS
    ),
}
# Words added after reading the misses of a dev set (bench.statement_questions set N, 2026-12-05: a net change in
# the company's cash with its name between the caption's words; new debt, notes or bonds issued or borrowed),
# kept apart and switchable like the SEC topics' (docqa.profiles.sec.topics, SecWeights.words_from_misses)
_ASKS_FROM_MISSES: dict[tuple[str, ...], str] = {
    CASH_FLOW_STATEMENT: (
        r"net (?:increase|decrease|change) in (?:\S+ ){1,3}?cash"
        r"|(?:issu(?:e|ed|ing|ance of)|borrow(?:ed)?|new|additional) (?:\S+ ){0,3}?(?:debt|notes|bonds|borrowings)"
    ),
}
# The financial statements proper, which a filing's head (its cover, Item 1) never holds
FINANCIAL_STATEMENTS = (BALANCE_SHEET, INCOME_STATEMENT, CASH_FLOW_STATEMENT)


def _compiled(words_from_misses: bool) -> dict[tuple[str, ...], re.Pattern[str]]:
    found = {}
    for statement, asks in _ASKS.items():
        pattern = asking_pattern(asks, _ASKS_FROM_MISSES.get(statement, "") if words_from_misses else "")
        if pattern is not None:
            found[statement] = pattern
    return found


_PATTERNS = {True: _compiled(True), False: _compiled(False)}


def asked_statements(question: str, words_from_misses: bool = True) -> tuple[Titles, ...]:
    """The statements a question asks about, each as the titles its heading may have (plural forms
    stem alike: "Consolidated Statements of Cash Flows"); none for a question that asks for no
    statement's line."""
    return tuple(statement for statement, pattern in _PATTERNS[words_from_misses].items() if pattern.search(question))
