"""The questions of bench/section_questions.py: fixed templates per topic, in three sets, and how users name
the filers of financebench_dev. Written before any was scored; see that module for how each set was used."""

from __future__ import annotations

TEMPLATES: dict[str, tuple[str, str]] = {
    "legal": (
        "Is {co} involved in any material legal proceedings as of {period}?",
        "What lawsuits or litigation did {co} disclose in its {form} for {period}?",
    ),
    "risks": (
        "What are the main risks to {co}'s business that it lists in its {period} {form}?",
        "What factors could hurt {co}'s results, according to its {period} filing?",
    ),
    "properties": (
        "Where are {co}'s principal facilities, and does it own or lease them ({period})?",
        "What properties did {co} report in {period}?",
    ),
    "equity": (
        "On which exchange is {co}'s stock listed, and did it pay dividends in {period}?",
        "Did {co} repurchase any of its shares in {period}?",
    ),
    "market_risk": (
        "How exposed was {co} to interest rate and currency changes in {period}?",
        "What market risks does {co} face, per its {period} {form}?",
    ),
    "controls": (
        "Did {co}'s management find its internal control over financial reporting effective for {period}?",
        "Did {co} report any material weakness in {period}?",
    ),
    "competition": (
        "Who are {co}'s competitors, per its {period} annual report?",
        "How does {co} describe the competitive landscape in {period}?",
    ),
    "employees": (
        "How many employees did {co} have at the end of {period}?",
        "What does {co} say about its workforce in {period}?",
    ),
    "liquidity": (
        "What were {co}'s main sources of liquidity in {period}?",
        "Does {co} have enough cash and credit to meet its needs, according to its {period} {form}?",
    ),
}

# Two more phrasings per topic, written with the first two and kept unscored while the section map was
# mended on what the first two showed: the figure on these is the one no change was fitted to.
HELD_OUT_TEMPLATES: dict[str, tuple[str, str]] = {
    "legal": (
        "Summarize the pending litigation against {co} in {period}.",
        "Does {co} face any court cases or regulatory investigations that could be material ({period})?",
    ),
    "risks": (
        "What uncertainties did {co} warn investors about in {period}?",
        "List the principal risk factors for {co} in {period}.",
    ),
    "properties": (
        "How much office and manufacturing space does {co} own versus lease ({period})?",
        "Where is {co} headquartered and what other sites does it operate, as of {period}?",
    ),
    "equity": (
        "How much did {co} pay out to shareholders in dividends in {period}?",
        "How many shares did {co} buy back during {period}, and at what average price?",
    ),
    "market_risk": (
        "How would a change in interest rates affect {co}, per its {period} {form}?",
        "What is {co}'s foreign exchange exposure in {period}?",
    ),
    "controls": (
        "Were {co}'s disclosure controls and procedures effective at the end of {period}?",
        "Did {co} make any changes to its internal control over financial reporting in {period}?",
    ),
    "competition": (
        "Which companies does {co} compete against ({period})?",
        "What are the competitive factors in {co}'s markets, per its {period} {form}?",
    ),
    "employees": ("What was {co}'s headcount in {period}?", "How many people work for {co}, as of {period}?"),
    "liquidity": (
        "How does {co} plan to fund its cash needs, per its {period} {form}?",
        "What credit facilities did {co} have available in {period}?",
    ),
}

# Set C: what an analyst asks of any filer's 10-K or 10-Q about its business, securities and notes, in the
# words of FinanceBench's generic questions (asked of every company there; the first of each pair) and an
# analyst's own (the second), written before any was scored.
FILING_TEMPLATES: dict[str, tuple[str, str]] = {
    "industry": (
        "What industry does {co} primarily operate in?",
        "Describe {co}'s business and its main products, per its {period} {form}.",
    ),
    "registered_securities": (
        "Which debt securities are registered to trade on a national securities exchange under {co}'s name"
        " as of {period}?",
        "What classes of securities does {co} have registered under Section 12(b), per its {period} {form}?",
    ),
    "acquisitions": (
        "What are major acquisitions that {co} has done in {period}?",
        "Which businesses did {co} buy in {period}, and for how much?",
    ),
    "restructuring": (
        "What is the nature & purpose of {co}'s restructuring liability as of {period}?",
        "What restructuring charges did {co} record in {period}?",
    ),
    "segments": (
        "What are the geographies that {co} primarily operates in as of {period}?",
        "What are {co}'s reportable segments in {period}?",
    ),
    "legal": (
        "Has {co} reported any materially important ongoing legal battles from {period}?",
        "Is {co} a defendant in any significant lawsuit as of {period}?",
    ),
    "equity": (
        "Has {co} paid dividends to common shareholders in {period}?",
        "Does {co} maintain a stable trend of dividend distribution as of {period}?",
    ),
}
# Set D: why a line of the results changed, which Item 7's results of operations explains (S-K Item 303(b)(2))
# and the statements show as numbers only; written with the section map's entry for it (2026-12-05), so not
# held out from it.
REASON_TEMPLATES: dict[str, tuple[str, str]] = {
    "results_margins": (
        "What drove the change in {co}'s operating margin in {period}?",
        "Which factors contributed to the change in {co}'s gross margin in {period}?",
    ),
    "results_lines": (
        "What were the main reasons for the change in {co}'s revenue in {period}?",
        "Why did {co}'s selling, general and administrative expenses change in {period}?",
    ),
}
TEMPLATE_SETS = {"A": TEMPLATES, "B": HELD_OUT_TEMPLATES, "C": FILING_TEMPLATES, "D": REASON_TEMPLATES}

# How users name these filers; other files fall back to the file name's first part.
COMPANY_NAMES = {
    "3M": "3M",
    "ACTIVISIONBLIZZARD": "Activision Blizzard",
    "ADOBE": "Adobe",
    "AMAZON": "Amazon",
    "AMCOR": "Amcor",
    "AMD": "AMD",
    "BESTBUY": "Best Buy",
    "BLOCK": "Block",
    "COCACOLA": "Coca-Cola",
    "CORNING": "Corning",
    "GENERALMILLS": "General Mills",
    "MGMRESORTS": "MGM Resorts",
    "PEPSICO": "PepsiCo",
    "ULTABEAUTY": "Ulta Beauty",
    "WALMART": "Walmart",
}
