"""Top venues: the journals and conferences whose papers get the venue signal.

A venue list entry matches a paper's venue (both folded to lower-case words, `&` as `and`) in
one of three ways, chosen by how the entry is written:

- an acronym (one word with two or more capitals: `NeurIPS`, `CVPR`) matches as a whole word,
  so `2017 IEEE Conference on Computer Vision and Pattern Recognition (CVPR)` is CVPR;
- a name of three or more words matches as a phrase: `Advances in Neural Information
  Processing Systems 30` is `Neural Information Processing Systems`;
- a shorter name matches the whole venue, parenthesised parts left out: `Science (New York,
  N.Y.)` is `Science`, but `Computer Science` and `Nature Communications` are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from websearch_mcp.ranking.papers import fold

# Broad multidisciplinary and flagship journals, and the top conferences of computer science
# (where conferences are the main venues). `academic.venues` in the configuration adds to it.
TOP_VENUES: tuple[str, ...] = (
    # journals
    "Nature", "Science", "Cell", "The Lancet", "The BMJ", "Nature Medicine", "Nature Genetics",
    "Nature Biotechnology", "Nature Methods", "Nature Neuroscience", "Nature Physics",
    "Nature Chemistry", "Nature Materials", "Nature Machine Intelligence",
    "Proceedings of the National Academy of Sciences", "PNAS",
    "New England Journal of Medicine", "NEJM", "Journal of the American Medical Association",
    "JAMA", "British Medical Journal", "Journal of the American Chemical Society", "JACS",
    "Physical Review Letters", "Phys Rev Lett", "Annals of Mathematics", "Journal of the ACM",
    "Communications of the ACM", "Journal of Machine Learning Research", "JMLR",
    "Transactions on Pattern Analysis and Machine Intelligence", "TPAMI",
    # machine learning, vision, language
    "NeurIPS", "NIPS", "Neural Information Processing Systems", "ICML",
    "International Conference on Machine Learning", "ICLR",
    "International Conference on Learning Representations", "CVPR",
    "Computer Vision and Pattern Recognition", "ICCV",
    "International Conference on Computer Vision", "ECCV",
    "European Conference on Computer Vision", "ACL",
    "Association for Computational Linguistics", "EMNLP",
    "Empirical Methods in Natural Language Processing", "NAACL", "AAAI", "IJCAI",
    # data, retrieval, systems, languages, theory, security, graphics
    "KDD", "Knowledge Discovery and Data Mining", "SIGIR",
    "Research and Development in Information Retrieval", "SIGMOD", "Management of Data", "VLDB",
    "Very Large Data Bases", "OSDI", "Operating Systems Design and Implementation", "SOSP",
    "Symposium on Operating Systems Principles", "NSDI", "SIGCOMM", "PLDI",
    "Programming Language Design and Implementation", "POPL", "Principles of Programming Languages",
    "STOC", "Symposium on Theory of Computing", "FOCS", "Foundations of Computer Science", "SODA",
    "IEEE Symposium on Security and Privacy", "USENIX Security Symposium",
    "Computer and Communications Security", "SIGGRAPH",
    "International Conference on Software Engineering", "Human Factors in Computing Systems",
)  # fmt: skip

_PARENS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_CAPITALS = re.compile(r"[A-Z]")


def _norm(text: str) -> str:
    return fold(text.replace("&", " and ")).removeprefix("the ")


@dataclass(frozen=True, slots=True)
class VenueList:
    """Entries prepared for matching: acronyms, phrases and exact names (all folded), each with
    the entry as written, for the explanation."""

    acronyms: dict[str, str]
    phrases: dict[str, str]
    exact: dict[str, str]

    def match(self, venue: str | None) -> str | None:
        """The entry `venue` matches, or None."""
        if not venue:
            return None
        if found := self.exact.get(_norm(_PARENS.sub(" ", venue))):
            return found
        folded = _norm(venue)
        for word in folded.split():
            if found := self.acronyms.get(word):
                return found
        padded = f" {folded} "
        return next((name for p, name in self.phrases.items() if f" {p} " in padded), None)


@lru_cache(maxsize=16)
def venue_list(extra: tuple[str, ...] = ()) -> VenueList:
    """The built-in top venues plus `extra` (cached: the configured list rarely changes)."""
    acronyms: dict[str, str] = {}
    phrases: dict[str, str] = {}
    exact: dict[str, str] = {}
    for entry in (e.strip() for e in TOP_VENUES + extra):
        folded = _norm(entry)
        if not folded:
            continue
        if " " not in entry and len(_CAPITALS.findall(entry)) >= 2:
            acronyms.setdefault(folded, entry)
        elif folded.count(" ") >= 2:
            phrases.setdefault(folded, entry)
        else:
            exact.setdefault(folded, entry)
    return VenueList(acronyms, phrases, exact)
