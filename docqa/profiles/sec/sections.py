"""Which standard section of a filing holds what a question asks about, so passages under that section's
heading rank first within the filing.

Every SEC filer lays its reports out by the same items (Regulation S-K; Form 10-K Items 1-16, Form 10-Q
Parts I and II, Form 8-K Items 1.01-9.01), and the notes to its statements carry the titles that US GAAP's
topics give them (Segment Reporting, Debt, Income Taxes, ...). (Chinese filings' standard sections are the
Chinese filings profile's: docqa.profiles.csrc.sections.) An analyst's question names the topic in
their own words ("ongoing legal battles", "who are its competitors", "buybacks"), not the item's title
("Legal Proceedings", "Competition", "Issuer Purchases of Equity Securities"); BM25 then ranks whatever page
repeats the words. The map below goes from a topic's common words to the titles of the section(s) that hold
it. It was written from the forms' own item titles and the standard note titles, not from any question set;
what it gains is measured by company-grouped cross-validation (docs/retrieval.md). The store's second pass
adds a bonus to passages under those headings (docqa.store.keyword.passage_bm25).

Pure functions of the question's text.
"""

from __future__ import annotations

import re

from docqa.core.query import Titles
from docqa.profiles.matching import specific_sections

RESULTS_OF_OPERATIONS = ("results of operations",)  # Item 7's part that gives the reasons (asks_for_reasons)
# (the titles a section's heading may carry, lowercased; what a question says when it asks about it)
# Form 10-K Item 1 (Business): what the company does. A 10-K opens with it, right after the cover.
_BUSINESS: tuple[tuple[tuple[str, ...], str], ...] = (
    # Item 101 of Regulation S-K, the description of the business: its industry, principal products and services
    (
        (
            "item 1 business",
            "business overview",
            "company overview",
            "description of business",
            "products and services",
        ),
        r"industr(?:y|ies)|(?:main|principal|key|core|major) (?:products|services|offerings|lines of business)"
        r"|products and services|lines? of business|business (?:model|overview|description)"
        r"|(?:nature|description) of (?:its |the |their )?business(?:es)?|describe \S+ business"
        r"|what (?:does|do) \S+ (?:do|make|sell)",
    ),
    (("competition", "competitive conditions"), r"compet(?:e|es|ition|itors?|itive)"),
    (("customers", "major customers", "significant customers"), r"customers?|clients?|customer concentration"),
    (
        ("human capital", "employees"),
        r"employees|headcount|workforce|human capital|personnel|full[- ]time staff|people (?:work|employed)",
    ),
    (("backlog", "remaining performance obligations"), r"backlog|remaining performance obligations|order book"),
    (
        ("segment information", "segment reporting", "segments", "geographic information", "reportable segments"),
        r"segments?|regions?|geograph(?:y|ies|ic|ical)|by country|international operations",
    ),
)
_SECTIONS: tuple[tuple[tuple[str, ...], str], ...] = (
    *_BUSINESS,
    # Item 1A, 10-Q Part II Item 1A
    (("risk factors",), r"risks|risk factors|uncertaint(?:y|ies)"),
    # Item 2
    # "item 2 properties": the stems of "properties" are those of a note's "Property and Equipment"
    (
        ("item 2 properties",),
        r"properties|facilities|headquarter(?:s|ed)|head office|square feet|plants|warehouses|distribution centers"
        r"|(?:office|manufacturing|warehouse|retail) space|real estate",
    ),
    # Item 3, 10-Q Part II Item 1, and the contingencies note
    (
        ("legal proceedings", "litigation", "contingencies", "commitments and contingencies"),
        r"legal|lawsuits?|litigation|proceedings|sued|court|antitrust|investigations?|settlements?",
    ),
    # Item 5, 10-Q Part II Item 2
    (
        (
            "market for registrant's common equity",
            "issuer purchases of equity securities",
            "dividends",
            "share repurchases",
            "unregistered sales of equity securities",
        ),
        r"dividends?|buy[- ]?backs?|bought back|repurchas\w*|holders of record|share price|stock price",
    ),
    # Item 7
    (
        ("liquidity and capital resources", "liquidity"),
        r"liquidity|capital resources|borrowing capacity|credit facilit(?:y|ies)|revolv(?:er|ing)",
    ),
    (("capital expenditures", "capital spending"), r"capital (?:spending|expenditure plans?|investment plans?)"),
    (
        ("critical accounting estimates", "critical accounting policies", "use of estimates"),
        r"critical accounting|significant (?:accounting )?estimates|judgments and estimates",
    ),
    # Item 8's auditor's report, Item 14
    (
        ("report of independent registered public accounting firm", "principal accountant fees and services"),
        r"auditors?|audit firm|accounting firm|audit fees|audit opinion|auditor's (?:report|opinion)",
    ),
    (
        ("going concern", "liquidity and going concern", "report of independent registered public accounting firm"),
        r"going concern|substantial doubt",
    ),
    # Item 11 (often in the proxy statement it points to)
    (
        ("executive compensation", "compensation discussion and analysis"),
        r"executive compensation|named executive officers|(?:ceo|cfo|executives?)(?:'s)? (?:pay|compensation|salary)",
    ),
    # Item 7's results of operations (S-K Item 303(b)(2)): the reasons for material changes in revenue and
    # expense lines, which the statements show as numbers only (asks_for_reasons)
    (
        RESULTS_OF_OPERATIONS,
        r"drove|driven|drivers?|what caused|caused (?:the|a|an|its)|reasons? (?:for|behind)"
        r"|why (?:did|has|have|was|were|is|are|do|does)"
        r"|factors? (?:behind|driving|that (?:drove|caused|contributed))"
        r"|contribut(?:ed|ors?) to (?:the |its )?(?:change|increase|decrease|decline|growth|drop|rise|reduction)",
    ),
    # Item 7A
    (
        ("quantitative and qualitative disclosures about market risk", "market risk", "derivative", "hedging"),
        r"market risks?|interest rate risks?|foreign (?:currency|exchange) risks?|commodity price|hedg\w*|derivatives?"
        r"|(?:changes?|movements?|fluctuations?|rises?|increases?|declines?) in interest rates"
        r"|(?:interest rate|foreign (?:currency|exchange)|currency|exchange rate|commodity) (?:exposures?"
        r"|fluctuations?|movements?|changes|sensitivity)",
    ),
    # Item 9A
    (("controls and procedures",), r"internal controls?|material weakness|disclosure controls"),
    # The notes' standard titles
    (
        ("debt", "long-term debt", "borrowings", "short-term borrowings", "financing arrangements"),
        r"debt|borrowings?|notes due|senior notes|bonds|commercial paper|credit agreements?|maturities",
    ),
    (("income taxes",), r"tax(?:es)?"),
    (
        ("acquisitions", "business combinations", "acquisitions and divestitures", "divestitures"),
        r"acquisitions?|acquired|acquire|mergers?|divest\w*|bought|(?-i:buy)|takeovers?",  # "Best Buy" is a name
    ),
    (("restructuring", "restructuring charges", "restructuring and other charges"), r"restructuring"),
    (("leases",), r"leases?|lessee"),
    (("goodwill", "goodwill and intangible assets", "intangible assets"), r"goodwill|intangibles?|impairments?"),
    (
        ("stock-based compensation", "share-based compensation", "stock compensation"),
        r"(?:stock|share|equity)[- ]based compensation|stock options",
    ),
    (
        ("pension", "retirement benefits", "employee benefit plans", "postretirement benefits"),
        r"pensions?|postretirement|retirement plans?",
    ),
    (
        ("investments", "marketable securities", "fair value measurements", "cash equivalents and investments"),
        r"short[- ]term investments|marketable securities|debt securities|available[- ]for[- ]sale|fair value",
    ),
    (
        ("disaggregation of revenue", "revenue recognition", "net sales by category", "revenue by category"),
        r"product categor(?:y|ies)|by product|revenue by|sales by|disaggregat\w*",
    ),
    # Banks and savings institutions: Regulation S-K Subpart 1400 (Item 1402's average balances, yields and
    # net interest margin; Item 1405's charge-offs and credit quality) and the capital ratios that bank holding
    # companies report under the Federal Reserve's capital rules. Lines a bank's statements carry (net interest
    # income, loans, deposits, the allowance and provision for credit losses) are statement questions
    # (docqa.profiles.sec.statements), not these.
    (
        (
            "regulatory capital",
            "capital management",
            "capital risk management",
            "capital adequacy",
            "capital ratios",
            "regulatory capital ratios",
        ),
        # not a bare "capital ratio": a working capital ratio or a debt-to-capital ratio is no bank's
        r"cet ?1|common equity tier 1|tier 1|tier one|(?:regulatory|risk[- ]based) capital|supplementary leverage"
        r"|basel(?: iii)?",
    ),
    (
        ("credit quality", "credit risk management", "allowance for credit losses", "allowance for loan losses"),
        r"(?:net )?charge[- ]?offs?|non-?performing (?:loans|assets)|delinquenc(?:y|ies)|credit quality",
    ),
    (
        ("net interest income", "average balances and net interest income", "net interest margin"),
        r"net interest (?:margin|yield|spread)|interest rate spread|average (?:balances?|yields?)",
    ),
    # Item 101(c)(2)(i): the material effects of government regulation (a utility's rate cases among them)
    (
        ("regulation", "government regulation", "regulatory matters", "regulatory environment", "rate matters"),
        r"government regulations?|regulatory (?:matters|environment|approvals?|proceedings)|rate (?:cases?|base)"
        r"|public (?:utility|service) commissions?",
    ),
    # Form 8-K items
    (
        ("submission of matters to a vote of security holders",),
        r"vote|voted|annual meeting|agm|shareholder proposals?|stockholder proposals?",
    ),
    (("entry into a material definitive agreement",), r"entered into|definitive agreement|amendment"),
)
# What a 10-K's or 10-Q's cover page states (the forms' cover: the securities registered under Section 12(b)
# with their trading symbols and exchanges, the filer's status, the market value held by non-affiliates).
_COVER = re.compile(
    r"registered (?:to trade|for trading|pursuant to|under section 12)|section 12\(b\)|national securities exchange"
    r"|(?:large )?accelerated filer|smaller reporting company|emerging growth company|shell company"
    r"|(?:held by )?non-?affiliates|state of incorporation|irs employer",
    re.IGNORECASE,
)
_SEC_PATTERNS = tuple(
    (titles, re.compile(rf"(?<![\w&])(?:{asks})(?![\w&])", re.IGNORECASE)) for titles, asks in _SECTIONS
)
_BUSINESS_TITLES = frozenset(titles for titles, _ in _BUSINESS)


def asked_sections(question: str) -> tuple[Titles, ...]:
    """The standard sections of an SEC filing a question's topic lives in, each as the titles its heading may
    carry; none for a question that names no such topic. A topic's words inside a longer topic's phrase belong
    to that one: "market risks" asks for Item 7A, not also for the risk factors its "risks" would name alone."""
    return specific_sections(question, _SEC_PATTERNS)


def asks_for_reasons(filing_sections: tuple[Titles, ...]) -> bool:
    """Whether a question asks why a line changed ("What drove the operating margin change?"): Item 7 gives
    the reasons, the statement only the numbers, so such a question is no statement question."""
    return RESULTS_OF_OPERATIONS in filing_sections


def asks_about_the_cover(question: str) -> bool:
    """Whether a question asks what an SEC filing's cover page states: the securities registered under
    Section 12(b) (their classes, trading symbols, exchanges), the filer's status, its state of incorporation,
    the market value of the shares held by non-affiliates."""
    return _COVER.search(question) is not None


def past_the_head(financial_statement: bool, filing_sections: tuple[Titles, ...], cover: bool) -> bool:
    """Whether what a question asks of an SEC filing sits past the filing's head (its cover and Item 1,
    Business, which open a 10-K): in a financial statement, or only in standard sections that come later
    (risk factors, legal proceedings, the notes). Such a question gains nothing from the head chunk that a
    short question about a document as a whole gets (docqa.store.keyword.index)."""
    if cover:
        return False
    return financial_statement or (bool(filing_sections) and not _BUSINESS_TITLES.intersection(filing_sections))
