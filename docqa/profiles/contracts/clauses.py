"""The words contracts write a clause in, for a question that names the clause in other words: "when does each
contract expire?" is answered by "the term of this Agreement shall continue for two years", which holds none of
the question's words.

One entry per kind of clause of the Contract Understanding Atticus Dataset's taxonomy (CUAD v1, The Atticus
Project: its category names), each with how a question names the clause and the words such a clause is drafted
in, from common contract drafting (not from any question set). They are added to the search of each document of
a collection or comparison question (docqa.service.reading), whose per-document search finds a clause by its
words alone; a lookup's search is left as it is. The 21 kinds the evidence bench asks about were chosen on half A
of bench.collection_evidence's contracts and reported on half B (docs/benchmarks/reading.md); the others, every
further kind of the taxonomy, are written from drafting practice and not measured.
"""

from __future__ import annotations

import re

# (CUAD category, a question naming it, the words its clauses are drafted in)
CLAUSE_WORDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Expiration Date", r"\bexpir(?:e|es|ed|y|ation)\b|\bend\s+date\b", ("term", "initial", "continue", "until")),
    ("Renewal Term", r"\brenew(?:s|al|ed|ing)?\b", ("renew", "successive", "automatically", "extend")),
    ("Notice Period To Terminate Renewal", r"\bnon-?renewal\b", ("renew", "notice", "prior", "written")),
    ("Non-Compete", r"\bnon[- ]?compet\w*|\bcompet(?:e|es|ition|ing)\b", ("compete", "competing", "competitive")),
    ("Governing Law", r"\bgovern\w*\b.*\blaws?\b|\blaws?\b.*\bgovern\w*", ("governed", "construed", "laws")),
    ("Cap On Liability", r"\bcap(?:s|ped)?\b.*\bliabilit|\bliabilit\w*\b.*\b(?:cap|limit)", ("exceed", "aggregate")),
    ("Anti-Assignment", r"\bassign(?:s|ment|ed|able)?\b", ("assign", "consent", "transfer")),
    ("Audit Rights", r"\baudit", ("audit", "books", "records", "inspect")),
    ("Insurance", r"\binsur", ("insurance", "insured", "coverage")),
    ("Exclusivity", r"\bexclusiv", ("exclusive", "exclusively", "sole")),
    ("Change Of Control", r"\bchange\s+(?:of|in)\s+control\b", ("control", "merger", "acquisition")),
    ("Most Favored Nation", r"\bmost[- ]favou?red\b|\bmfn\b", ("favorable", "pricing", "price")),
    ("Minimum Commitment", r"\bminimum\b", ("minimum", "purchase", "order", "quantity")),
    ("Liquidated Damages", r"\bliquidated\b", ("liquidated", "damages", "penalty")),
    ("Warranty Duration", r"\bwarrant", ("warrants", "warranty", "defects")),
    ("Termination For Convenience", r"\bconvenience\b|\bwithout\s+cause\b", ("terminate", "convenience", "notice")),
    ("Post-Termination Services", r"\bafter\s+(?:the\s+)?(?:termination|expiration)|\bpost-?termination", ("survive",)),
    ("No-Solicit Of Employees", r"\bsolicit\w*|\bhir(?:e|es|ing)\b.*\bemployee", ("solicit", "employ", "hire")),
    ("Rofr/Rofo/Rofn", r"\bfirst\s+(?:refusal|offer|negotiation)\b", ("first", "refusal", "offer")),
    (
        "Revenue/Profit Sharing",
        r"\b(?:revenue|profit)s?\b.*\bshar|\bshar\w*\b.*\b(?:revenue|profit)",
        ("royalty", "percent"),
    ),
    ("Ip Ownership Assignment", r"\bintellectual\s+property\b.*\b(?:own|assign)", ("ownership", "title", "assigns")),
    # The other kinds of CUAD's taxonomy: no question of the evidence bench names them, so these are not measured
    ("Agreement Date", r"\b(?:signed|dated|executed|entered\s+into)\b", ("dated", "made", "entered", "executed")),
    ("Effective Date", r"\beffective\s+date\b|\btak(?:e|es)\s+effect\b", ("effective", "commence", "date")),
    ("Parties", r"\bwho\s+(?:are|were)\s+the\s+parties\b|\bparties\s+to\b", ("between", "parties", "party")),
    (
        "No-Solicit Of Customers",
        r"\bsolicit\w*\b.*\b(?:customers?|clients?)\b|\b(?:customers?|clients?)\b.*\bsolicit",
        ("solicit", "customers", "clients", "induce"),
    ),
    (
        "Competitive Restriction Exception",
        r"\bexceptions?\b.*\b(?:non-?compet|exclusiv|restrict)",
        ("notwithstanding", "except", "exception", "restriction"),
    ),
    ("Non-Disparagement", r"\bdisparag\w*", ("disparage", "disparaging", "derogatory", "reputation")),
    (
        "Price Restrictions",
        r"\bprices?\s+(?:increases?|changes?|restrictions?|caps?)\b|\braise\w*\s+(?:its\s+|their\s+)?prices?\b",
        ("increase", "prices", "adjust", "exceed"),
    ),
    ("Volume Restriction", r"\bvolume\b|\bmaximum\s+(?:quantity|number|amount)\b", ("volume", "maximum", "exceed")),
    ("Joint Ip Ownership", r"\bjoint(?:ly)?\s+(?:own\w*|ip|intellectual)", ("jointly", "joint", "owned")),
    ("License Grant", r"\blicen[cs]e\s+grants?\b|\bgrant\w*\b.*\blicen[cs]e", ("grants", "license", "licence")),
    ("Non-Transferable License", r"\bnon-?transferable\b", ("non-transferable", "transferable", "sublicense")),
    (
        "Affiliate License",
        r"\baffiliates?\b.*\blicen[cs]|\blicen[cs]\w*\b.*\baffiliates?\b",
        ("affiliates", "subsidiaries", "license"),
    ),
    (
        "Unlimited License",
        r"\bunlimited\s+(?:licen|use|users|copies)|\ball[- ]you[- ]can[- ]eat\b",
        ("unlimited", "copies"),
    ),
    ("Irrevocable Or Perpetual License", r"\birrevocabl\w*|\bperpetu\w*", ("irrevocable", "perpetual", "royalty-free")),
    ("Source Code Escrow", r"\bescrow\b|\bsource\s+code\b", ("escrow", "source", "deposit", "release")),
    (
        "Uncapped Liability",
        r"\buncapped\b|\bunlimited\s+liabilit|\bliabilit\w*\b.*\bnot\s+(?:be\s+)?(?:limited|capped)\b",
        ("exclusion", "limitation", "negligence", "willful"),
    ),
    ("Covenant Not To Sue", r"\bnot\s+to\s+sue\b", ("sue", "challenge", "contest", "validity")),
    ("Third Party Beneficiary", r"\bthird[- ]part(?:y|ies)\s+beneficiar", ("beneficiary", "beneficiaries", "enforce")),
)
_COMPILED = tuple((category, re.compile(pattern, re.IGNORECASE), words) for category, pattern, words in CLAUSE_WORDS)


def clause_words(question: str) -> tuple[str, ...]:
    """The drafting words of every kind of clause the question names, in the table's order, without repeats."""
    found: list[str] = []
    for _, names, words in _COMPILED:
        if names.search(question):
            found += [w for w in words if w not in found]
    return tuple(found)
