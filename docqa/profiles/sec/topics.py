"""The SEC profile's vocabulary: each standard section of a filing, the titles its heading carries, the words a
question asks about it in, and where each comes from.

`source` names the form item, regulation or accounting standard the titles (and the words `asks` holds) come
from. `misses` holds the words that were added after reading questions a dev set missed (`read_in` names the
set): they are kept apart so that what they gain is measured as the weights are, by company-grouped
cross-validation (`python -m bench.crossval --grid sec.words_from_misses=0,1`; docs/benchmarks/retrieval.md),
and can be switched off (SecWeights.words_from_misses).
"""

from __future__ import annotations

from dataclasses import dataclass

from docqa.core.query import Titles

SET_B = "bench.section_questions set B (analyst phrasings), 2026-12-05"
SET_C = "bench.section_questions set C (what analysts ask of filings), 2026-12-04"
SET_D = "bench.section_questions set D (why a line changed), 2026-12-05"


@dataclass(frozen=True)
class Topic:
    """A standard section: the titles its heading may carry (lowercased) and the words that ask about it."""

    titles: Titles
    asks: str  # a regular expression of the words, from the source's own titles and descriptions
    source: str  # the form item, regulation or standard
    misses: str = ""  # words added after reading a dev set's misses, switchable
    read_in: str = ""  # the set whose misses they were read in


RESULTS_OF_OPERATIONS = ("results of operations",)  # Item 7's part that gives the reasons (asks_for_reasons)

# Form 10-K Item 1 (Business): what the company does. A 10-K opens with it, right after the cover.
BUSINESS: tuple[Topic, ...] = (
    Topic(
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
        "Regulation S-K Item 101, the description of the business (Form 10-K Item 1)",
    ),
    Topic(("competition", "competitive conditions"), r"compet(?:e|es|ition|itors?|itive)", "S-K Item 101(c)"),
    Topic(
        ("customers", "major customers", "significant customers"),
        r"customers?|clients?|customer concentration",
        "S-K Item 101(c); ASC 280-10-50-42 (major customers)",
    ),
    Topic(
        ("human capital", "employees"),
        r"employees|headcount|workforce|human capital",
        "S-K Item 101(c)(2)(ii), human capital resources",
        r"personnel|full[- ]time staff|people (?:work|employed)",
        SET_B,
    ),
    Topic(
        ("backlog", "remaining performance obligations"),
        r"backlog|remaining performance obligations|order book",
        "S-K Item 101(c) (backlog); ASC 606-10-50-13 (remaining performance obligations)",
    ),
    Topic(
        ("segment information", "segment reporting", "segments", "geographic information", "reportable segments"),
        r"segments?|regions?|geograph(?:y|ies|ic|ical)|by country|international operations",
        "ASC 280, Segment Reporting; S-K Item 101(b)",
    ),
)

# Form 8-K's items (1.01-9.01), by their titles and what the form's General Instructions say each reports. Item
# 2.02 (results of operations) is the release filed with it, and 8.01 (other events) names no topic.
EIGHT_K: tuple[Topic, ...] = (
    Topic(
        ("entry into a material definitive agreement",),
        r"entered into|definitive agreement|amendment",
        "Form 8-K Item 1.01",
    ),
    Topic(
        ("termination of a material definitive agreement",),
        r"terminat(?:ed|es|ion of) (?:the |an? |its )?(?:material )?(?:definitive )?(?:agreement|contract)",
        "Form 8-K Item 1.02",
    ),
    Topic(("bankruptcy or receivership",), r"bankruptcy|receivership|chapter 11", "Form 8-K Item 1.03"),
    Topic(
        ("material cybersecurity incidents", "cybersecurity incident"),
        r"cyber ?security incidents?|cyber ?attacks?|data breach(?:es)?|ransomware",
        "Form 8-K Item 1.05",
    ),
    Topic(
        ("completion of acquisition or disposition of assets",),
        r"complet(?:ed|ion of) (?:the |its )?(?:acquisition|disposition|sale|merger)",
        "Form 8-K Item 2.01",
    ),
    Topic(
        ("creation of a direct financial obligation",),
        r"direct financial obligations?|off-balance sheet arrangements? of a registrant",
        "Form 8-K Item 2.03",
    ),
    Topic(
        ("costs associated with exit or disposal activities",),
        r"exit or disposal|exit activities|disposal activities",
        "Form 8-K Item 2.05",
    ),
    Topic(("material impairments",), r"material impairments?", "Form 8-K Item 2.06"),
    Topic(
        ("notice of delisting or failure to satisfy a continued listing rule or standard", "transfer of listing"),
        r"delist(?:ed|ing)?|continued listing|listing (?:rule|standard)s?|transfer of (?:its )?listing",
        "Form 8-K Item 3.01",
    ),
    Topic(
        ("material modification to rights of security holders",),
        r"rights of (?:its )?(?:security|share|stock)holders|modif(?:y|ied|ication)s? (?:to|of) (?:the )?rights",
        "Form 8-K Item 3.03",
    ),
    Topic(
        ("changes in registrant's certifying accountant",),
        r"chang(?:e|ed|es|ing) (?:(?:in|of) )?(?:its |the )?(?:auditors?|accountants?|accounting firm|audit firm)"
        r"|dismiss(?:ed|al of) (?:its |the )?(?:auditors?|accountants?)",
        "Form 8-K Item 4.01",
    ),
    Topic(
        ("non-reliance on previously issued financial statements",),
        r"restat(?:e|ed|ement|ements)|non-reliance|previously issued financial statements",
        "Form 8-K Item 4.02",
    ),
    Topic(("changes in control of registrant",), r"changes? (?:in|of) control", "Form 8-K Item 5.01"),
    Topic(
        ("departure of directors or certain officers", "election of directors", "appointment of certain officers"),
        r"(?:resign(?:s|ed|ation)?|depart(?:s|ed|ure)?|stepp(?:ed|ing) down|appoint(?:s|ed|ment)?|elect(?:s|ed|ion)?)"
        r" (?:of |as )?"
        r"(?:its |the |a )?(?:new )?(?:ceo|cfo|chief \w+ officer|directors?|president|chair(?:man|person)?)",
        "Form 8-K Item 5.02",
    ),
    Topic(
        ("amendments to articles of incorporation or bylaws", "change in fiscal year"),
        r"by-?laws|articles of incorporation|certificate of incorporation"
        r"|chang(?:e|ed) (?:in |of )?(?:its |the )?fiscal year",
        "Form 8-K Item 5.03",
    ),
    Topic(
        ("submission of matters to a vote of security holders",),
        r"vote|voted|annual meeting|agm|shareholder proposals?|stockholder proposals?",
        "Form 8-K Item 5.07",
    ),
    Topic(("regulation fd disclosure",), r"regulation fd|reg fd", "Form 8-K Item 7.01"),
    Topic(("financial statements and exhibits",), r"exhibits? (?:filed|furnished|attached)", "Form 8-K Item 9.01"),
)

# A results release (furnished under Form 8-K Item 2.02): the outlook it customarily gives, and the reconciliation
# of each non-GAAP measure it uses to the nearest GAAP measure, which Regulation G requires.
RELEASE: tuple[Topic, ...] = (
    Topic(
        ("outlook", "guidance", "financial outlook", "business outlook", "fiscal year outlook"),
        r"outlook|guidance|forecasts?",
        "results releases furnished under Form 8-K Item 2.02: their outlook section",
    ),
    Topic(
        ("reconciliation of gaap to non-gaap", "non-gaap financial measures", "reconciliation of non-gaap"),
        r"non-gaap|adjusted (?:ebitda|eps|earnings|operating (?:income|margin|profit)|net (?:income|earnings))",
        "Regulation G (17 CFR 244.100(a)(2)): a non-GAAP measure's reconciliation to GAAP",
    ),
)

SECTIONS: tuple[Topic, ...] = (
    *BUSINESS,
    Topic(("risk factors",), r"risks|risk factors|uncertaint(?:y|ies)", "Form 10-K Item 1A; Form 10-Q Part II Item 1A"),
    # "item 2 properties": the stems of "properties" are those of a note's "Property and Equipment"
    Topic(
        ("item 2 properties",),
        r"properties|facilities|headquarters|square feet|plants|warehouses|distribution centers",
        "Form 10-K Item 2 (S-K Item 102)",
        r"headquartered|head office|(?:office|manufacturing|warehouse|retail) space|real estate",
        SET_B,
    ),
    Topic(
        ("legal proceedings", "litigation", "contingencies", "commitments and contingencies"),
        r"legal|lawsuits?|litigation|proceedings|sued|court|antitrust|investigations?|settlements?",
        "Form 10-K Item 3, Form 10-Q Part II Item 1 (S-K Item 103); ASC 450, Contingencies",
    ),
    Topic(
        (
            "market for registrant's common equity",
            "issuer purchases of equity securities",
            "dividends",
            "share repurchases",
            "unregistered sales of equity securities",
        ),
        r"dividends?|buy[- ]?backs?|bought back|repurchas\w*|holders of record|share price|stock price",
        "Form 10-K Item 5, Form 10-Q Part II Item 2 (S-K Items 201 and 703)",
    ),
    Topic(
        ("liquidity and capital resources", "liquidity"),
        r"liquidity|capital resources|borrowing capacity|credit facilit(?:y|ies)|revolv(?:er|ing)",
        "Form 10-K Item 7 (S-K Item 303(b)(1))",
    ),
    Topic(
        ("capital expenditures", "capital spending"),
        r"capital (?:spending|expenditure plans?|investment plans?)",
        "S-K Item 303(b)(1)(ii), material commitments for capital expenditures",
    ),
    Topic(
        ("critical accounting estimates", "critical accounting policies", "use of estimates"),
        r"critical accounting|significant (?:accounting )?estimates|judgments and estimates",
        "S-K Item 303(b)(3), critical accounting estimates",
    ),
    Topic(
        ("report of independent registered public accounting firm", "principal accountant fees and services"),
        r"auditors?|audit firm|accounting firm|audit fees|audit opinion|auditor's (?:report|opinion)",
        "Form 10-K Item 8's auditor's report (PCAOB AS 3101) and Item 14",
    ),
    Topic(
        ("going concern", "liquidity and going concern", "report of independent registered public accounting firm"),
        r"going concern|substantial doubt",
        "ASC 205-40, Going Concern; PCAOB AS 2415",
    ),
    Topic(
        ("executive compensation", "compensation discussion and analysis"),
        r"executive compensation|named executive officers|(?:ceo|cfo|executives?)(?:'s)? (?:pay|compensation|salary)",
        "Form 10-K Item 11 (S-K Item 402), often in the proxy statement it points to",
    ),
    # the reasons for material changes in revenue and expense lines, which the statements show as numbers only
    Topic(
        RESULTS_OF_OPERATIONS,
        "",
        "Form 10-K Item 7, results of operations (S-K Item 303(b)(2))",
        r"drove|driven|drivers?|what caused|caused (?:the|a|an|its)|reasons? (?:for|behind)"
        r"|why (?:did|has|have|was|were|is|are|do|does)"
        r"|factors? (?:behind|driving|that (?:drove|caused|contributed))"
        r"|contribut(?:ed|ors?) to (?:the |its )?(?:change|increase|decrease|decline|growth|drop|rise|reduction)",
        SET_D,
    ),
    Topic(
        ("quantitative and qualitative disclosures about market risk", "market risk", "derivative", "hedging"),
        r"market risks?|interest rate risks?|foreign (?:currency|exchange) risks?|commodity price|hedg\w*|derivatives?",
        "Form 10-K Item 7A (S-K Item 305); ASC 815, Derivatives and Hedging",
        r"(?:changes?|movements?|fluctuations?|rises?|increases?|declines?) in interest rates"
        r"|(?:interest rate|foreign (?:currency|exchange)|currency|exchange rate|commodity) (?:exposures?"
        r"|fluctuations?|movements?|changes|sensitivity)",
        SET_B,
    ),
    Topic(
        ("controls and procedures",),
        r"internal controls?|material weakness|disclosure controls",
        "Form 10-K Item 9A (S-K Items 307 and 308)",
    ),
    # the notes' standard titles
    Topic(
        ("debt", "long-term debt", "borrowings", "short-term borrowings", "financing arrangements"),
        r"debt|borrowings?|notes due|senior notes|bonds|commercial paper|credit agreements?|maturities",
        "ASC 470, Debt",
    ),
    Topic(("income taxes",), r"tax(?:es)?", "ASC 740, Income Taxes"),
    Topic(
        ("acquisitions", "business combinations", "acquisitions and divestitures", "divestitures"),
        r"acquisitions?|acquired|mergers?|divest\w*",
        "ASC 805, Business Combinations; S-K Item 303 (divestitures)",
        r"acquire|bought|buy|takeovers?",  # a filer's name ("Best Buy") is taken out of the question first
        SET_C,
    ),
    Topic(
        ("restructuring", "restructuring charges", "restructuring and other charges"),
        r"restructuring",
        "ASC 420, Exit or Disposal Cost Obligations",
    ),
    Topic(("leases",), r"leases?|lessee", "ASC 842, Leases"),
    Topic(
        ("goodwill", "goodwill and intangible assets", "intangible assets"),
        r"goodwill|intangibles?|impairments?",
        "ASC 350, Intangibles - Goodwill and Other",
    ),
    Topic(
        ("stock-based compensation", "share-based compensation", "stock compensation"),
        r"(?:stock|share|equity)[- ]based compensation|stock options",
        "ASC 718, Compensation - Stock Compensation",
    ),
    Topic(
        ("pension", "retirement benefits", "employee benefit plans", "postretirement benefits"),
        r"pensions?|postretirement|retirement plans?",
        "ASC 715, Compensation - Retirement Benefits",
    ),
    Topic(
        ("investments", "marketable securities", "fair value measurements", "cash equivalents and investments"),
        r"short[- ]term investments|marketable securities|debt securities|available[- ]for[- ]sale|fair value",
        "ASC 320, Investments - Debt Securities; ASC 820, Fair Value Measurement",
    ),
    Topic(
        ("disaggregation of revenue", "revenue recognition", "net sales by category", "revenue by category"),
        r"product categor(?:y|ies)|by product|revenue by|sales by|disaggregat\w*",
        "ASC 606-10-50-5, disaggregation of revenue",
    ),
    # Banks: lines a bank's statements carry (net interest income, loans, deposits, the allowance and provision
    # for credit losses) are statement questions (docqa.profiles.sec.statements), not these.
    Topic(
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
        "the Federal Reserve's capital rules for bank holding companies (12 CFR 217; Basel III)",
    ),
    Topic(
        ("credit quality", "credit risk management", "allowance for credit losses", "allowance for loan losses"),
        r"(?:net )?charge[- ]?offs?|non-?performing (?:loans|assets)|delinquenc(?:y|ies)|credit quality",
        "Regulation S-K Item 1405, the allowance for credit losses and charge-offs",
    ),
    Topic(
        ("net interest income", "average balances and net interest income", "net interest margin"),
        r"net interest (?:margin|yield|spread)|interest rate spread|average (?:balances?|yields?)",
        "Regulation S-K Item 1402, average balances, yields and net interest margin",
    ),
    Topic(
        ("regulation", "government regulation", "regulatory matters", "regulatory environment", "rate matters"),
        r"government regulations?|regulatory (?:matters|environment|approvals?|proceedings)|rate (?:cases?|base)"
        r"|public (?:utility|service) commissions?",
        "S-K Item 101(c)(2)(i), the material effects of government regulation (a utility's rate cases among them)",
    ),
    *EIGHT_K,
    *RELEASE,
)
