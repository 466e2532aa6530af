"""Which scope a question asks for (docqa.core.scopes), read from its wording and the documents it names.

People ask about a collection as a whole in a few recurring shapes, in English and Chinese: "which of these
contracts ...", "how many agreements ...", "list every lease that ...", "do any of our contracts ...",
"哪些合同…", "多少份…"; they compare with "compare", "the difference between", "A vs B", "比较", "区别";
and they ask for a whole document with "summarize", "give me an outline", "what is this contract about",
"总结", "概括". Everything else is a lookup: the passage that answers is somewhere, and retrieval finds it.

A document is *named* when the question holds a word of its file name, title or company that few of the
collection's documents share ("the Dynamex agreement", "Accuray's distributor agreement"); generic words of
document names ("agreement", "inc", "exhibit") name nothing. Pure functions of text and plain values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from docqa.core.scopes import Scope

# the kinds of document a folder holds, plural ("which contracts") and either ("each contract", "of the filings")
_PLURAL = (
    r"(?:contracts|agreements|documents|docs|files|filings|reports|leases|policies|deals|licen[cs]es|amendments|"
    r"judgments|prospectuses|papers|pdfs|companies|vendors|suppliers)"
)
_KINDS = (
    rf"(?:{_PLURAL}|contract|agreement|document|file|filing|report|lease|policy|deal|licen[cs]e|amendment|"
    r"judgment|prospectus|paper|pdf|company|vendor|supplier)"
)
_ONE_WORD = r"(?:[\w'-]+\s+)?"  # "which *signed* contracts", never "what law governs the agreement"
_CJK_KINDS = r"(?:合同|协议|文件|文档|判决|判决书|报告|招股书|招股说明书|公司)"
_COLLECTION = re.compile(
    "|".join(
        (
            # "which contracts ...", "which of these agreements ..."; "which contract has the code K000?" is a lookup
            rf"\b(?:which|what)\s+(?:ones?\s+)?(?:(?:these|those|the|our|my|all|your)\s+)?{_ONE_WORD}{_PLURAL}\b",
            rf"\b(?:which|what)\s+(?:ones?\s+)?of\s+(?:these|those|the|our|my|all|your)\s+{_ONE_WORD}{_KINDS}\b",
            rf"\bhow\s+many\s+(?:of\s+)?(?:(?:these|those|the|our|my)\s+)?{_ONE_WORD}{_PLURAL}\b",
            rf"\b(?:list|name|find|show|identify|count)\s+(?:me\s+)?(?:all|every|each|any)\s+(?:of\s+)?(?:the\s+)?"
            rf"{_ONE_WORD}{_ONE_WORD}{_KINDS}\b",
            rf"\b(?:any|all|each|every|none)\s+(?:one\s+)?of\s+(?:these|those|the|our|my)\s+{_ONE_WORD}{_KINDS}\b",
            rf"\b(?:across|over|in|for)\s+(?:all|each|every)\s+(?:of\s+)?(?:(?:the|these|our|my)\s+)?{_ONE_WORD}"
            rf"{_KINDS}\b",
            rf"\b(?:does|do|is|are)\s+(?:any|every|each)\s+{_ONE_WORD}{_KINDS}\b",
            rf"\b(?:each|every)\s+{_KINDS}\b",
            # "哪些合同", "多少份协议", "所有合同", "每份": not "公司有哪些子公司" (which subsidiaries: a lookup)
            rf"哪些{_CJK_KINDS}|哪几份|多少份|多少个{_CJK_KINDS}|几份{_CJK_KINDS}|所有(?:的)?{_CJK_KINDS}|每(?:一)?份|各份|"
            rf"各个{_CJK_KINDS}|全部{_CJK_KINDS}",
        )
    ),
    re.IGNORECASE,
)
_COMPARE = re.compile(
    r"\bcompar(?:e|es|ed|ing|ison)\b|\bcontrast\b|\bdifference(?:s)?\b|\bdiffer(?:s|ent)?\b|\bversus\b|\bvs\.?(?=\s)|"
    r"\bside[- ]by[- ]side\b|\bhow\s+does\s+.+\s+stack\s+up\b|比较|对比|区别|差异|异同|不同之处|相比",
    re.IGNORECASE,
)
_DOCUMENT = re.compile(
    r"\bsummar(?:y|ies|i[sz]e|i[sz]ing)\b|\boutline\b|\boverview\b|\bsynopsis\b|\btl;?dr\b|\bgist\b|\brecap\b|"
    r"\b(?:key|main|important)\s+(?:points|terms|takeaways|provisions|ideas)\b|"
    r"\bwhat\s+is\s+(?:this|the|that)\s+(?:\w+\s+)?(?:document|contract|agreement|filing|report|paper|file|lease)\s+"
    r"about\b|\b(?:walk\s+me\s+through|break\s+down)\b|"
    rf"\b(?:list|enumerate)\s+(?:all|every|each)\b.*\b(?:in|of)\s+(?:this|the|that)\s+{_ONE_WORD}{_KINDS}\b|"
    r"总结|概括|摘要|概述|主要内容|要点|梳理|归纳",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")
# Words of document names that say what kind of document it is or how it was filed, not which one.
# fmt: off
_GENERIC = frozenset((
    "a", "an", "and", "the", "of", "for", "to", "in", "on", "by", "with", "between", "from", "this", "that",
    "agreement", "agreements", "contract", "contracts", "amendment", "amended", "restated", "exhibit", "ex",
    "inc", "incorporated", "corp", "corporation", "co", "company", "llc", "ltd", "limited", "plc", "lp", "llp",
    "sa", "ag", "nv", "gmbh", "form", "document", "file", "copy", "final", "draft", "version", "execution",
    "pdf", "txt", "docx", "html", "md", "doc", "text", "dated", "effective", "schedule", "appendix", "annex",
    "addendum", "no", "number", "part", "section", "10k", "10q", "8k", "20f", "10-k", "10-q", "8-k", "20-f",
    # which of a document's versions, not which document ("FIRST AMENDMENT TO SUPPLY AGREEMENT")
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "amend",
))
# fmt: on
_GLUED_SUFFIX = re.compile(r"([a-z]{3,})(?:inc|corp|llc|ltd|plc|co)$")
_CJK_SUFFIX = re.compile(r"(?:股份有限公司|有限责任公司|有限公司|集团|公司)$")
# Where a Chinese company's name starts with its place (GB/T 2260's provinces, and the largest cities), the
# name people use is what follows it: 江苏爱康太阳能科技 -> 爱康.
_CJK_PLACE = re.compile(
    "^(?:北京|天津|上海|重庆|河北|山西|辽宁|吉林|黑龙江|江苏|浙江|安徽|福建|江西|山东|河南|湖北|湖南|广东|海南|四川|贵州|"
    "云南|陕西|甘肃|青海|台湾|内蒙古|广西|西藏|宁夏|新疆|香港|澳门|深圳|杭州|苏州|广州|南京|武汉|成都|西安|厦门|宁波|"
    "无锡|青岛|大连|合肥|长沙|郑州|济南|福州|昆明|东莞|佛山)(?:省|市)?"
)
MIN_NAME_WORD = 3
NAMED_BY_AT_MOST = 2  # documents whose names may share a word that still names them
_KIND_WORDS = frozenset({"agreement", "agreements", "contract", "contracts", "license", "lease", "plan", "amendment"})


@dataclass(frozen=True)
class NamedDocument:
    """What a question can call a document by: its file name, title and company (the catalog's)."""

    document_id: int
    names: tuple[str, ...]


@dataclass(frozen=True)
class ScopeDecision:
    scope: Scope
    documents: tuple[int, ...]  # the documents the question names (in the collection's order)
    reason: str  # said in the answer's warnings when docqa chose: why this scope


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def _name_words(names: Sequence[str]) -> tuple[set[str], set[str]]:
    """A document's name words: those of its company or title, and those that say its kind, the word just
    before "agreement" or "contract" ("DISTRIBUTOR AGREEMENT", "supply_contract")."""
    words: set[str] = set()
    kinds: set[str] = set()
    for name in names:
        stem = PurePath(name).stem if "." in name[-6:] else name
        spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|[_\-.,()]", " ", stem)  # DynamexInc_10-K -> Dynamex Inc 10 K
        split = _words(spaced)
        for i, word in enumerate(split):
            glued = _GLUED_SUFFIX.match(word)  # EDGAR's "ACCURAYINC": the name without its legal form
            found = {w for w in (word, glued.group(1) if glued else "") if _distinct_shape(w)}
            kind = i + 1 < len(split) and split[i + 1] in _KIND_WORDS
            (kinds if kind else words).update(found)
    return words - kinds, kinds


def _distinct_shape(word: str) -> bool:
    if word in _GENERIC or word.isdigit() or _CJK_RUN.fullmatch(word):
        return False
    short_mark = len(word) == 2 and any(c.isdigit() for c in word) and any(c.isalpha() for c in word)  # 3M
    return len(word) >= MIN_NAME_WORD or short_mark


def _cjk_cores(names: Sequence[str]) -> set[str]:
    """A Chinese name's core (its legal suffix off): named when the question holds its first four characters,
    or the two after its place name."""
    cores = set()
    for name in names:
        for run in _CJK_RUN.findall(name):
            core = _CJK_SUFFIX.sub("", run)
            if len(core) >= 2:
                cores.add(core[:4])
            place = _CJK_PLACE.match(core)
            if place and len(core) >= place.end() + 2:
                cores.add(core[place.end() : place.end() + 2])
    return cores


def named_documents(question: str, documents: Sequence[NamedDocument]) -> tuple[int, ...]:
    """The documents whose distinctive name words (shared by few of the collection's documents) the
    question holds, in the collection's order."""
    asked = {w.removesuffix("'s").removesuffix("’s") for w in _words(question)}  # "Accuray's" names Accuray
    folded = question.casefold()
    named = {d.document_id: _name_words(d.names) for d in documents}
    spread = Counter(w for own, kinds in named.values() for w in own | kinds)
    scores: dict[int, float] = {}
    firm: set[int] = set()  # named by a word of its name alone (or its Chinese name's core)
    for doc in documents:
        own, kinds = named[doc.document_id]
        # a word of several documents' names names none of them: a company's or a title's own word may be
        # shared by a contract and its amendment, a word of its kind ("distributor", "license") by none
        distinctive = {w for w in own if spread[w] <= NAMED_BY_AT_MOST} | {w for w in kinds if spread[w] == 1}
        matched = distinctive & asked
        score = sum(1 / spread[w] for w in matched)
        cjk = any(core in folded for core in _cjk_cores(doc.names))
        if score or cjk:
            scores[doc.document_id] = score + cjk
            if cjk or any(spread[w] == 1 for w in matched):
                firm.add(doc.document_id)
    # "the Pf Hospitality Group and the Pelican Delivers agreements": a third document whose name shares only
    # "group" is not named beside the two that match by more; a word of one document's name alone names it,
    # however many words named another ("the Data Call Technologies and the Deltathree agreements")
    best = max(scores.values(), default=0.0)
    return tuple(d for d, score in scores.items() if d in firm or score >= best / 2)


def choose_scope(question: str, documents: Sequence[NamedDocument], pinned: Sequence[int] = ()) -> ScopeDecision:
    """The scope the question's wording asks for. pinned: documents the caller chose (a pinned document,
    or the documents of a comparison)."""
    named = tuple(pinned) or named_documents(question, documents)
    if _COMPARE.search(question) and len(named) >= 2:
        return ScopeDecision("compare", named, f"compares {len(named)} named documents")
    if _COLLECTION.search(question):
        return ScopeDecision("collection", (), "asks about the documents of the collection")
    if _DOCUMENT.search(question):
        if len(named) >= 2:
            return ScopeDecision("compare", named, f"asks about {len(named)} named documents as wholes")
        if len(named) == 1 or len(documents) == 1:
            target = named or (documents[0].document_id,)
            return ScopeDecision("document", target, "asks about a whole document")
        return ScopeDecision("document", (), "asks about a whole document (none named: the best match is read)")
    return ScopeDecision("lookup", named, "asks for a passage")


def without_names(text: str, documents: Sequence[NamedDocument]) -> str:
    """The text without the words that name these documents ("Compare the termination clauses of the Dynamex
    and the Accuray agreements" -> "Compare the termination clauses of the and the agreements"): each is
    searched on its own, where its company's name would rank its preamble, not its clause."""
    names = set().union(*(own | kinds for d in documents for own, kinds in [_name_words(d.names)]))
    kept = [w for w in re.split(r"(\s+)", text) if w.strip().casefold().strip(".,;:?!'’s") not in names]
    return "".join(kept)


def topic_of(question: str) -> str:
    """What to search each document for: the question without its collection wording ("which of these
    contracts have a non-compete clause?" -> "have a non-compete clause?"), so that the words every
    document of such a folder holds ("contracts") do not rank its passages."""
    topic = _COLLECTION.sub(" ", question)
    topic = _COMPARE.sub(" ", topic)
    topic = re.sub(r"\s+", " ", topic).strip(" ,:;")
    return topic if len(_words(topic)) >= 1 else question


def may_read_many(question: str) -> bool:
    """Whether the question's wording may ask for more than a lookup (before the catalog is read): a process
    that answers one question sizes its engine for several prompts at once then."""
    return any(p.search(question) for p in (_COLLECTION, _COMPARE, _DOCUMENT))
