"""Request parameters shared by Google and the APIs that serve Google results (Serper,
SerpApi, Programmable Search)."""

from __future__ import annotations

#: `tbs` values for a time range.
QDR = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}

_TRADITIONAL = {"tw", "hk", "mo", "hant"}


def google_language(language: str | None) -> tuple[str | None, str | None, str | None]:
    """`(hl, gl, lr)` from a language tag: `en` -> (en, None, lang_en), `en-US` -> (en, us,
    lang_en), `zh-TW` -> (zh, tw, lang_zh-TW). Google's `lr` splits Chinese by script."""
    if not language:
        return None, None, None
    parts = language.strip().replace("_", "-").lower().split("-")
    lang = parts[0]
    region = next((p for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    if lang == "zh":
        lr = "lang_zh-TW" if _TRADITIONAL & set(parts[1:]) else "lang_zh-CN"
    else:
        lr = f"lang_{lang}"
    return lang, region, lr
