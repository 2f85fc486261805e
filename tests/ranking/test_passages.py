"""The passage scorer (pure): bounds, page order, relevance, and indifference to boilerplate."""

from __future__ import annotations

import asyncio
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from websearch_mcp.fetch import Document
from websearch_mcp.fetch.htmltext import extract_html
from websearch_mcp.ranking.lexical import analyze_query
from websearch_mcp.ranking.passages import (
    ELLIPSIS,
    MAX_PASSAGE_CHARS,
    MAX_PASSAGES,
    PASSAGE_BUDGET,
    SCAN_CHARS,
    best_passages,
    chunks,
    plain_lines,
)
from websearch_mcp.ranking.tokens import terms
from websearch_mcp.search.answer import ResultOut
from websearch_mcp.search.read_pages import read_results

WORDS = [
    "river", "rivers", "glacier", "salmon", "tide", "harbour", "pgvector", "index", "postgres",
    "the", "of", "and", "in", "a", "survey", "flow", "winter", "station", "gpt-4o", "cliff",
]  # fmt: skip
word = st.sampled_from(WORDS)
sentence = st.lists(word, min_size=3, max_size=40).map(lambda ws: " ".join(ws).capitalize() + ".")
paragraph = st.lists(sentence, min_size=1, max_size=6).map(" ".join)
heading = st.lists(word, min_size=1, max_size=4).map(lambda ws: "## " + " ".join(ws))
block = st.one_of(paragraph, paragraph, heading)
blocks = st.lists(block, min_size=0, max_size=25)
query = st.lists(word, min_size=1, max_size=5).map(" ".join)


def page(parts: list[str]) -> str:
    return "\n\n".join(parts)


@settings(max_examples=100, deadline=None)
@given(blocks, query)
def test_passages_are_few_short_chunks_in_page_order(parts: list[str], text: str) -> None:
    found = best_passages(page(parts), text)
    candidates = chunks(page(parts))
    assert len(found) <= MAX_PASSAGES
    assert sum(map(len, found)) <= PASSAGE_BUDGET
    assert all(len(p) <= MAX_PASSAGE_CHARS for p in found)
    positions = [candidates.index(p) for p in found]  # each passage is a chunk of the page
    assert positions == sorted(positions) and len(set(found)) == len(found)


@settings(max_examples=100, deadline=None)
@given(blocks, query)
def test_every_passage_holds_a_query_term(parts: list[str], text: str) -> None:
    wanted = analyze_query(text).content_set
    for passage in best_passages(page(parts), text):
        assert wanted & terms(passage)


@settings(max_examples=100, deadline=None)
@given(blocks, query, st.lists(st.integers(0, 25), max_size=5))
def test_navigation_and_repeats_change_nothing(
    parts: list[str], text: str, where: list[int]
) -> None:
    """Menus of links (even links named after the query) and a repeated banner are boilerplate."""
    menu = " ".join(f"[{w}](/{w})" for w in text.split()) + " [Home](/) [Sign in](/login)"
    noisy = list(parts)
    for at in sorted(where, reverse=True):
        noisy.insert(min(at, len(noisy)), menu)
    if parts:
        noisy.append(parts[0])  # the first block again, as a repeated banner would be
    assert best_passages(page(noisy), text) == best_passages(page(parts), text)


def test_a_page_answering_everywhere_gives_at_most_max_passages() -> None:
    paragraph = "Paragraph {} says the salmon run starts when the river warms in the spring."
    text = page([paragraph.format(i) for i in range(MAX_PASSAGES + 2)])
    found = best_passages(text, "salmon run")
    assert found == [paragraph.format(i) for i in range(MAX_PASSAGES)]


def test_an_images_alt_text_does_not_make_its_line_navigation() -> None:
    text = (
        "Intro paragraph that talks about something else entirely, not fish at all.\n\n"
        "![A picture of the salmon run at the river mouth in spring](img.png)"
        " The salmon run begins in April."
    )
    (found,) = best_passages(text, "salmon run")
    assert found.endswith("The salmon run begins in April.")


def test_pdf_page_markers_are_not_text_of_the_page() -> None:
    text = (
        "--- page 1 ---\n\nThe salmon run reaches the upper river in the first weeks of spring."
        "\n\n--- page 2 ---\n\nIn winter the salmon stay in deep pools below the old falls."
    )
    found = best_passages(text, "salmon")
    assert len(found) == 2 and not any("page" in p for p in found), found


def test_a_query_without_content_words_or_a_page_without_them_gives_none() -> None:
    text = page(["The rivers of the north carry meltwater from the glaciers to the sea."] * 3)
    assert best_passages(text, "the of and") == []
    assert best_passages(text, "pgvector index") == []
    assert best_passages("", "rivers") == []


def test_the_best_passage_is_found_deep_in_a_long_page() -> None:
    filler = [
        f"Section {i} is about the harbour, its boats and the weather of week {i}." * 2
        for i in range(300)
    ]
    answer = "The pgvector extension builds an HNSW index over the embedding column."
    text = page(["# Notes", *filler, answer, "The harbour closes in November."])
    found = best_passages(text, "pgvector HNSW index")
    assert found and answer in found[0]


def test_a_term_on_every_line_weighs_little() -> None:
    """The site's name is everywhere; the passage with the rarer query word wins."""
    lines = [
        f"Example Times reports on topic number {i} of the week in some detail." for i in range(20)
    ]
    lines.insert(12, "Example Times: the salmon return to the Tana river in late June each year.")
    found = best_passages(page(lines), "example times salmon")
    assert found[0].startswith("Example Times: the salmon")


def test_markdown_is_read_as_text() -> None:
    text = (
        "## Install\n\nRun **pip install** with the [pgvector extension](https://x.test/pg) "
        "enabled, then create the index on the embedding column.\n"
    )
    assert best_passages(text, "pgvector extension install") == [
        "Install — Run pip install with the pgvector extension enabled, then create the index "
        "on the embedding column."
    ]


def test_markdown_escapes_and_single_emphasis_are_read_as_text() -> None:
    # As a page's text comes from extraction: identifiers escaped, <em> as `*`, <s> as `~~`.
    page = (
        "<html><body><main><h1>Loop methods</h1><p>Unrelated words about the build system and"
        " its many options.</p><p>The method run_until_complete blocks until the <em>given</em>"
        " future has completed, <s>not</s> returns 2*3 and keeps * as it is.</p></main></body>"
        "</html>"
    )
    text = extract_html(page, "https://example.com/loop").content
    assert "run\\_until\\_complete" in text and "*given*" in text  # Markdown, as extracted
    assert best_passages(text, "run_until_complete") == [
        "The method run_until_complete blocks until the given future has completed, not returns"
        " 2*3 and keeps * as it is."
    ]
    escaped = "A \\*literal\\* star and \\_under\\_ score stay in this line as they were written."
    assert best_passages(escaped, "literal") == [
        "A *literal* star and _under_ score stay in this line as they were written."
    ]


def test_a_long_sentence_is_cut_at_words_and_its_end_stays_in_reach() -> None:
    text = "Glacier " + "meltwater flows north " * 60 + "into the fjord of Tromsø at last."
    (found,) = best_passages(text, "glacier meltwater")
    assert len(found) <= MAX_PASSAGE_CHARS and found.endswith("…")
    assert text.startswith(found[:-1])
    (end,) = best_passages(text, "fjord tromsø")
    assert end.endswith("into the fjord of Tromsø at last.") and len(end) <= MAX_PASSAGE_CHARS
    # A run without spaces (Chinese without a full stop) is cut within the bound too.
    assert all(len(c) <= MAX_PASSAGE_CHARS for c in chunks("向量索引" * 200))


def test_a_sentence_repeated_on_a_line_is_one_passage() -> None:
    sentence = "The glacier " + "meltwater flows north " * 13 + "to the sea."
    assert best_passages(f"{sentence} {sentence} {sentence}", "glacier meltwater") == [sentence]


def test_rare_terms_and_adjacent_pairs_weigh_more() -> None:
    """Five chunks, each holding query terms as often as the others: the one with the rare term,
    or with the query's words next to each other, is among the four kept though it comes last."""
    words = ["alpha", "bravo", "charlie", "delta", "pgvector"]
    rare = [
        f"The {w} section of this page explains the matter at considerable length." for w in words
    ]
    assert rare[-1] in best_passages(page(rare), " ".join(words))
    apart = [
        f"Sound carries in {w} conditions, and its speed changes with the air." for w in words[:4]
    ]
    together = "The speed of sound in dry air is about 343 metres per second at twenty degrees."
    assert together in best_passages(page([*apart, together]), "speed of sound")


def test_only_the_start_of_a_very_long_page_is_searched() -> None:
    answer = "The pgvector index is fast: it keeps the vectors in a graph the planner walks."
    assert best_passages("\n" * SCAN_CHARS + answer, "pgvector index") == []
    assert best_passages("\n" * (SCAN_CHARS - len(answer)) + answer, "pgvector index") == [answer]


def test_a_line_of_unclosed_brackets_or_marks_is_read_in_linear_time() -> None:
    # Untrusted page text: the link and emphasis patterns must not scan the rest of the line
    # again from every bracket or mark, which grows with the square of the line's length.
    answer = "The pgvector index is fast: it keeps the vectors in a graph the planner walks."
    marks = ("*_" * 20_000 + "a", "a" + "_*" * 20_000 + "a", "a*_" * 20_000)
    nested = "[" * 10_000 + "a" + "](u)" * 10_000  # links in links' words, 10,000 deep
    # Abbreviations join the sentences they do not end; code spans up to the next backtick.
    joined = ("Dr. " * 50_000, "`a" * 20_000)
    for text in ("[" * 20_000, "[a](" * 10_000, "a\n" * 150_000, nested, *marks, *joined):
        start = time.perf_counter()
        (found,) = best_passages(f"{text}\n\n{answer}", "pgvector index")
        assert time.perf_counter() - start < 1.0
        assert found.endswith(answer)  # a line left short joins it


def test_a_link_is_read_as_its_text_whatever_its_target_holds() -> None:
    text = "See [Foo](https://en.wikipedia.org/wiki/Foo_(bar)) and [x](/y) or ![logo](/l.png)."
    assert plain_lines(text) == ["See Foo and x or ."]


def test_a_paragraph_right_after_a_table_row_is_a_line_of_its_own() -> None:
    text = (
        "| Station | Flow |\n|---|---|\n| North | 12 |\n"
        "The flow at the north station was measured every winter morning."
    )
    assert plain_lines(text) == [
        "Station Flow",
        "North 12",
        "The flow at the north station was measured every winter morning.",
    ]


def test_a_short_last_line_of_the_page_is_still_in_reach() -> None:
    """A table's last row or a list's last item, alone at the end of the page, holds an answer."""
    table = (
        "## Plans\n\n| Engine | Free tier | Price |\n|---|---|---|\n"
        "| Brave | 2000 queries a month | $3 per 1000 |\n| Tavily | 1000 credits | $8 per 1000 |\n"
    )
    (found,) = best_passages(table, "tavily price")
    assert found.endswith("Tavily 1000 credits $8 per 1000")
    items = (
        "- Python 3.11 or newer is required to run it.\n- Redis 7 for the cache.\n- nginx for TLS."
    )
    (found,) = best_passages(items, "nginx tls")
    assert found.endswith("— nginx for TLS.") and len(found) <= MAX_PASSAGE_CHARS


def test_a_short_last_line_joins_the_chunk_before_only_within_the_size_bound() -> None:
    last = "Short last line."
    room = MAX_PASSAGE_CHARS - len(" — ") - len(last)  # what the chunk before may hold
    for size in (room, room + 1, MAX_PASSAGE_CHARS - len(last)):
        paragraph = ("word " * 200)[: size - 1].strip().ljust(size - 1, "x") + "."
        found = chunks(f"{paragraph}\n\n{last}")
        assert all(len(c) <= MAX_PASSAGE_CHARS for c in found)
        assert found == ([f"{paragraph} — {last}"] if size == room else [paragraph])


def test_a_code_block_and_the_paragraph_after_it_are_apart() -> None:
    # As the extractor writes it: no blank line after the closing fence.
    text = (
        "Create the index with the statement below before loading the rows.\n\n```sql\n"
        "CREATE INDEX ON items USING hnsw (embedding vector_l2_ops);\n"
        "SELECT * FROM items ORDER BY embedding <-> '[3,1,2]' LIMIT 5;\n```\n"
        "The planner then walks the graph for every nearest-neighbour query it is given.\n"
    )
    assert best_passages(text, "planner graph") == [
        "The planner then walks the graph for every nearest-neighbour query it is given."
    ]
    (code,) = best_passages(text, "hnsw vector_l2_ops")
    assert code.startswith("CREATE INDEX") and "planner" not in code


def test_code_on_one_line_between_fences_opens_no_code_block() -> None:
    """A line "```x```" opened a code block: its code was lost, and the rest of the page was
    read as code (headings, emphasis marks and paragraphs run together, as written)."""
    text = (
        "Install the extension with the command below, then create it in your database.\n\n"
        "```pip install pgvector```\n\n## Indexing\n\n"
        "The planner then walks the **HNSW** graph for every nearest-neighbour query it is given.\n"
    )
    assert plain_lines(text) == [
        "Install the extension with the command below, then create it in your database.",
        "pip install pgvector",
        "Indexing",
        "The planner then walks the HNSW graph for every nearest-neighbour query it is given.",
    ]


def test_chinese_sentences_are_joined_as_written() -> None:
    text = (
        "pgvector扩展可以为嵌入列建立索引。查询时规划器沿着图找到最近的向量，速度很快！"
        "索引建好以后，插入新的行也会自动更新它，不需要重新建立。"
    )
    assert best_passages(text, "pgvector 索引") == [text]


def test_words_with_vowel_signs_are_read_whole() -> None:
    # Devanagari writes most vowels as combining signs: read apart at each, "हिन्दी" (Hindi)
    # would be the letters ह, न, द, which a page about Delhi's weather holds too.
    about = "हिन्दी व्याकरण में संज्ञा, सर्वनाम और क्रिया के नियम विस्तार से समझाए गए हैं।"
    weather = "दिल्ली में आज दिन भर हल्की बारिश होगी और शाम को तापमान नीचे आने की संभावना है।"
    assert best_passages(f"{about}\n\n{weather}", "हिन्दी") == [about]
    assert terms("हिन्दी व्याकरण") == {"हिन्दी", "व्याकरण"}


def test_hindi_sentences_end_at_the_danda() -> None:
    """Only `.!?` ended a sentence: a Hindi paragraph was one sentence, cut every 500
    characters mid-sentence."""
    filler = "दिल्ली में आज दिन भर हल्की बारिश होगी और शाम को तापमान नीचे आने की संभावना है।"
    about = "हिन्दी व्याकरण में संज्ञा, सर्वनाम और क्रिया के नियम विस्तार से समझाए गए हैं।"
    text = " ".join([filler] * 3 + [about] + [filler] * 8)
    [found] = best_passages(text, "व्याकरण")
    assert about in found and not found.endswith(ELLIPSIS), found


def test_thai_words_are_found_inside_runs_without_spaces() -> None:
    # Thai puts no space between words: "ภาษาไทย" (the Thai language) stands inside a run.
    school = "โรงเรียนของเราเปิดสอนภาษาไทยสำหรับชาวต่างชาติทุกวันเสาร์ตั้งแต่เก้าโมงเช้าถึงเที่ยงวัน"
    market = "ตลาดน้ำดำเนินสะดวกเปิดทุกวันตั้งแต่เช้ามืดและมีเรือขายผลไม้กับอาหารมากมายให้เลือกชิม"
    assert best_passages(f"{school}\n\n{market}", "ภาษาไทย") == [school]


def test_case_is_folded_with_the_dotted_capital_i_and_sharp_s() -> None:
    # Turkish writes "İstanbul"; Swiss German writes "Strasse" for "Straße".
    city = "İstanbul'un nüfusu 2023 yılında on beş milyonu geçti ve şehir büyümeye devam ediyor."
    capital = "Ankara Türkiye'nin başkentidir, nüfusu beş milyonun üzerindedir, hükümet burada."
    assert best_passages(f"{city}\n\n{capital}", "istanbul nüfusu") == [city]
    road = "Die Strasse zum Bahnhof ist wegen Bauarbeiten bis Ende Mai für den Verkehr gesperrt."
    kiosk = "Der Bahnhof hat einen neuen Kiosk, der täglich bis Mitternacht geöffnet bleibt."
    assert best_passages(f"{road}\n\n{kiosk}", "Straße Bahnhof") == [road]


def test_an_abbreviation_does_not_end_a_sentence() -> None:
    """A chunk full just before "Dr." left the passage "Smith who first counted ...": a sentence
    without its subject, and "U.S." or "e.g." cut the same way."""
    filler = "Filler sentence about the harbour and its many boats here. " * 8
    for sentence in (
        "It was Dr. Smith who first counted the salmon in the upper river that spring.",
        "Some fish, e.g. salmon and trout, swim up the river to spawn every single year.",
        "The U.S. Fish and Wildlife Service counts the salmon in the river every year.",
    ):
        found = best_passages(filler + sentence, "salmon")
        assert found and found[-1].endswith(sentence), found


@pytest.mark.parametrize(
    "sentence",
    [
        "The salmon that swim up this river were first counted in the USA.",
        "Fish, e.g. salmon and trout, swim up the river to spawn every year.",
        "Every spring in this valley some fish (e.g., salmon) spawn upriver.",
        "Of the four answers in the quiz on salmon the right one is option b.",
    ],
)
def test_a_full_stop_after_a_word_or_a_mid_sentence_abbreviation_ends_the_sentence(
    sentence: str,
) -> None:
    """Only a word that is an abbreviation keeps its sentence going ("Dr.", "e.g."), not a word
    ending in a capital ("USA.") or a lower-case letter, nor a sentence holding one earlier on:
    the chunk full just after `sentence` ends there, and the next sentence starts the next."""
    filler = "Filler sentence about the harbour and its many boats here."
    count = (MAX_PASSAGE_CHARS - len(sentence)) // (len(filler) + 1)
    after = "Then the " + "boats come back to the harbour at dusk and " * 4 + "rest."
    text = " ".join([filler] * count + [sentence, after])
    assert chunks(text)[:2] == [" ".join([filler] * count + [sentence]), after]


def test_code_keeps_its_marks() -> None:
    """Emphasis marks were dropped inside code spans and code blocks: `2**10` read "210",
    `__init__` read "init"."""
    text = (
        "Python classes define the `__init__` method to set up each new object they create.\n\n"
        "```\ndef __init__(self, **kwargs):\n    self.x = 2**10\n```\n"
        "That constructor takes keyword arguments and stores them on the object it builds.\n"
    )
    (prose,) = best_passages(text, "__init__ method")
    assert prose.startswith("Python classes define the __init__ method"), prose
    (code,) = best_passages(text, "__init__ kwargs")
    assert code.startswith("def __init__(self, **kwargs): self.x = 2**10"), code


def test_a_comment_or_a_list_item_in_a_code_block_is_code_not_a_heading_or_a_list() -> None:
    """In a code block `#` opens a comment, `- ` a YAML item and `|>` a pipe: the block is one
    line, as written, not a heading, list items and table rows each standing alone."""
    text = "```\nsteps:\n  # run the tests\n  - run: pytest -q\n```\n"
    assert plain_lines(text) == ["steps: # run the tests - run: pytest -q"]
    text = "```\nfish\n|> Enum.filter(&salmon?/1)\n|> Enum.count()\n```\n"
    assert plain_lines(text) == ["fish |> Enum.filter(&salmon?/1) |> Enum.count()"]


def test_a_longer_fence_or_a_blank_line_in_a_code_block_keeps_it_code() -> None:
    """A fence of four backticks (one that may hold "```") is a fence too, and a blank line in
    a code block does not close it: the comment after it is code, not a heading."""
    text = "````\nsteps:\n  # run the tests\n  - run: pytest -q\n````\n"
    assert plain_lines(text) == ["steps: # run the tests - run: pytest -q"]
    text = "```yaml\nsteps:\n\n  # run the tests\n  - run: pytest -q\n```\n"
    assert plain_lines(text) == ["steps:", "# run the tests - run: pytest -q"]


def test_a_run_without_spaces_is_not_cut_between_a_letter_and_its_vowel_sign() -> None:
    # Thai writes "กี" as the letter ก and the combining vowel ี: the next piece began with ี.
    text = "ก" * 498 + "กี" + "ข" * 300
    assert [c[0] for c in chunks(text)] == ["ก", "ก"]


def _read(content: str, content_type: str, query: str) -> list[str]:
    """The passages `read` gives for a page of `content_type` holding `content`."""
    url = "https://docs.example/notes"
    page = Document(url=url, final_url=url, content_type=content_type, content=content)

    async def load(_: str) -> Document:
        return page

    result: ResultOut = {"url": url, "title": "Notes", "snippet": "", "engines": [], "score": 1.0}
    found = asyncio.run(read_results([result], query, 1, 5.0, load))
    return found[0].get("passages") or []


@pytest.mark.parametrize("content_type", ["text/plain", "application/pdf"])
def test_a_plain_text_page_is_read_as_written_not_as_markdown(content_type: str) -> None:
    """Only HTML comes through the extractor as Markdown: a text file's or a PDF's `__init__`,
    `*args` and hard-wrapped lines opening with "12. " or "- " are its words, not emphasis
    marks or list items (the number was dropped and the sentence cut in two)."""
    text = (
        "Calling obj.__init__(*args) again resets the parser state before the next document.\n"
        "\n"
        "The relapse rate fell from 31 percent in the control group to\n"
        "12. percent in the treated group after two years of follow-up in the trial, and the\n"
        "- adjusted - rate fell as far.\n"
    )
    passages = _read(text, content_type, "init args parser state relapse rate treated group")
    assert "Calling obj.__init__(*args) again resets the parser state" in passages[0]
    assert (
        "to 12. percent in the treated group after two years of follow-up in the trial, and the"
        " - adjusted - rate fell as far." in passages[1]
    )
    # The extractor's Markdown is still read as Markdown.
    markdown = "Calling `obj.__init__` with **all** its *args* resets the parser state again."
    assert _read(markdown, "text/html", "init parser state") == [
        "Calling obj.__init__ with all its args resets the parser state again."
    ]


@pytest.mark.parametrize("content_type", ["text/html", "application/xhtml+xml", "text/markdown"])
def test_the_extractors_and_the_readers_markdown_is_read_as_markdown(content_type: str) -> None:
    """An XHTML page goes through the extractor as HTML does, and the reader API answers in
    Markdown: read as written, their passages kept the backticks and emphasis marks."""
    markdown = "Calling `obj.__init__` with **all** its *args* resets the parser state again."
    assert _read(markdown, content_type, "init parser state") == [
        "Calling obj.__init__ with all its args resets the parser state again."
    ]


def test_a_text_that_is_not_markdown_has_no_headings_table_rows_or_fences() -> None:
    """A hard-wrapped line of a text file that opens with `#`, `|` or a run of backticks is
    the paragraph's next line, not a heading, a table row or a code fence that ends it."""
    text = (
        "The survey ranked the parser\n"
        "#1 for speed among the tools it compared, and printed\n"
        "| as its column separator in the output it wrote,\n"
        "```\n"
        "as the file shows.\n"
    )
    assert plain_lines(text, markdown=False) == [
        "The survey ranked the parser #1 for speed among the tools it compared, and printed"
        " | as its column separator in the output it wrote, ``` as the file shows."
    ]
