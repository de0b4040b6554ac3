"""Drawing a PDF page as a PNG with a passage highlighted: pure PyMuPDF and difflib, no web framework.

It runs in the render processes (api/heavy.py Children), apart from the server's interpreter: MuPDF's
drawing and the highlight matching hold Python's GIL, which stalled every other request's event loop
when renders ran on threads (evals/results/burst_kind_render.md). The bounds of one render
(docs/protection.md#bounded-work): at most `max_pixels` pixels (a very tall or wide page is drawn
narrower than asked, never larger), and aligning the passage with the page costs at most `budget`
word comparisons (a longer passage is cut until it fits).
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pymupdf

HIGHLIGHT_FILL = (1.0, 0.78, 0.0)  # amber, drawn with the Multiply blend of a highlight annotation
MIN_RUN = 3  # words in a row that must match for a stretch of the page to count as the passage
_WORD = re.compile(r"[\w$%.,-]+")


def _norm(word: str) -> str:
    return word.lower().strip(".,;:()[]\"'")


def comparisons(words: Sequence[str], wanted: Sequence[str]) -> int:
    """The word pairs difflib compares in one pass of aligning `wanted` with `words`: every word of
    `words` against each occurrence of it in `wanted`. Linear to count; a pass costs this, and
    hostile text (few distinct words, repeated) makes it the product of the two lengths."""
    counts = Counter(wanted)
    return sum(counts[w] for w in words)


def runs(words: Sequence[str], wanted: Sequence[str], budget: int) -> tuple[list[difflib.Match], int]:
    """(difflib's matching blocks of MIN_RUN words or more, the comparisons spent): `wanted` is cut
    to its first half until one pass fits `budget` (a citation's excerpt fits many times over)."""
    cost = comparisons(words, wanted)
    while cost > budget and len(wanted) >= 2 * MIN_RUN:
        wanted = wanted[:len(wanted) // 2]
        cost = comparisons(words, wanted)
    if cost > budget or not words or not wanted:
        return [], 0
    matcher = difflib.SequenceMatcher(None, words, wanted, autojunk=False)
    return [b for b in matcher.get_matching_blocks() if b.size >= MIN_RUN], cost


def passage_rects(page: pymupdf.Page, passage: str, budget: int) -> list[pymupdf.Rect]:
    """The page's word boxes that spell the passage, one box per line.

    The excerpt a citation quotes is chunk text (whitespace normalised, cut mid-word at both ends,
    sometimes running onto the next page), so it is aligned word by word with the page's words
    instead of searched as one string; runs of MIN_RUN words or more count. `budget`: the word
    comparisons the alignment may cost (runs).
    """
    words = page.get_text("words", sort=True)  # (x0, y0, x1, y1, word, block, line, word_no)
    if not words or not passage.strip():
        return []
    page_words = [_norm(w[4]) for w in words]
    wanted = [_norm(w) for w in _WORD.findall(passage)]
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for block in runs(page_words, wanted, budget)[0]:
        for w in words[block.a:block.a + block.size]:
            key = (w[5], w[6])
            box = pymupdf.Rect(w[:4])
            lines[key] = lines[key] | box if key in lines else box
    return list(lines.values())


def recognised_rects(passage: str, chunks: Sequence[tuple[str, list[list[float]]]],
                     budget: int) -> list[pymupdf.Rect]:
    """On an OCR'd page (an image, no words to align with): the line boxes of the recognised chunks
    the passage quotes, i.e. those sharing a run of MIN_RUN words or more with it, the same test
    passage_rects applies to the page's words. Each box is one recognised line, as there. The
    chunks share `budget` (runs): the first ones are compared while it lasts."""
    wanted = [_norm(w) for w in _WORD.findall(passage)]
    rects: dict[tuple[float, ...], pymupdf.Rect] = {}
    for text, boxes in chunks:
        words = [_norm(w) for w in _WORD.findall(text)]
        found, spent = runs(words, wanted, budget)
        if found:
            for box in boxes:  # neighbouring chunks overlap by a few rows: each line once
                rects.setdefault(tuple(box[:4]), pymupdf.Rect(box[:4]))
        budget -= spent
        if budget <= 0:
            break
    return list(rects.values())


class Unrenderable(Exception):
    """The page cannot be drawn (a degenerate size, or a drawing PyMuPDF refuses)."""


def zoom_for(page: pymupdf.Rect, width: int, max_pixels: int) -> float:
    """The scale that draws the page `width` pixels wide, or narrower where that would hold more
    than `max_pixels` (a very tall or very wide page)."""
    w, h = float(page.width), float(page.height)
    if w <= 0 or h <= 0:
        raise Unrenderable("the page has no area")
    zoom = min(width / w, math.sqrt(max_pixels / (w * h)))
    while math.ceil(w * zoom) * math.ceil(h * zoom) > max_pixels:  # MuPDF rounds sizes up
        zoom *= 0.99
    return zoom


def render_page(path: Path, page_no: int, passage: str, width: int,
                recognised: Sequence[tuple[str, list[list[float]]]] = (), *,
                max_pixels: int, budget: int) -> tuple[bytes, int, str]:
    """(PNG bytes, number of highlighted lines, the highlight's box as "top,left,bottom,right"
    fractions of the page or ""); KeyError when the page does not exist, Unrenderable when it
    cannot be drawn. `recognised`: the page's OCR'd chunks (text, line boxes), used when the page
    itself has no text that spells the passage. At most `max_pixels` pixels (zoom_for) and `budget`
    word comparisons to find the passage (runs)."""
    with pymupdf.open(path) as doc:
        if not 1 <= page_no <= doc.page_count:
            raise KeyError(page_no)
        page = doc[page_no - 1]
        zoom = zoom_for(page.rect, width, max_pixels)
        rects = passage_rects(page, passage, budget) if passage else []
        if passage and not rects and recognised:
            rects = [r & page.rect for r in recognised_rects(passage, recognised, budget)]
            rects = [r for r in rects if not r.is_empty]
        for rect in rects:  # in memory only: the stored file is never written
            annot = page.add_highlight_annot(rect)
            annot.set_colors(stroke=HIGHLIGHT_FILL)
            annot.update(opacity=0.45)
        try:
            pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False)
        except (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError, MemoryError):  # a drawing MuPDF refuses
            raise Unrenderable("the page's drawing cannot be rendered") from None
        box = ""
        if rects:
            union = pymupdf.Rect(rects[0])
            for rect in rects[1:]:
                union |= rect
            w, h = page.rect.width, page.rect.height
            box = ",".join(f"{v:.4f}" for v in (union.y0 / h, union.x0 / w, union.y1 / h, union.x1 / w))
        return pix.tobytes("png"), len(rects), box
