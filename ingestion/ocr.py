"""OCR of a rendered PDF page with RapidOCR and the ONNX models its wheel ships.

rapidocr 3.x carries PP-OCRv6 small detection and recognition models (and an angle classifier,
not used here) inside the wheel (Apache-2.0, converted from PaddleOCR; the wheel's
MODEL_LICENSES.md and docs/formats.md), so nothing is downloaded: the image goes in as an array,
never as a path or URL (RapidOCR fetches URLs it is given). Lines come back with their boxes,
which are mapped back to PDF points so a citation can highlight them on the page image.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

import numpy as np
import pymupdf

from ingestion import memcap
from ingestion.errors import IngestError

log = logging.getLogger(__name__)

MAX_PIXELS = 40_000_000  # a poster-sized page is rendered at a lower resolution rather than at any cost


@functools.cache
def engine() -> Any:  # rapidocr.RapidOCR
    with memcap.lifted():  # the library and its models are trusted: loaded above a parsing child's cap
        from rapidocr import RapidOCR

        # No per-line 180° classifier: on rendered pages every line is upright (PyMuPDF applies the
        # page's /Rotate), and the classifier flips some long upright lines, which then read as
        # letter soup ("it t e a ses i it sin"; evals/results/ocr.md).
        return RapidOCR(params={"Global.log_level": "warning", "Global.use_cls": False})


def recognise_page(page: pymupdf.Page, dpi: int) -> list[tuple[float, float, float, float, str]]:
    """The page's recognised lines as (x0, y0, x1, y1, text) in PDF points, in no particular order."""
    zoom = dpi / 72
    width, height = page.rect.width * zoom, page.rect.height * zoom
    if width * height > MAX_PIXELS:
        zoom *= (MAX_PIXELS / (width * height)) ** 0.5
    try:
        pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
        image = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.stride)[:, : pix.width]
        result = engine()(np.ascontiguousarray(image))
    except MemoryError:
        raise
    except Exception as exc:  # an engine failure on one page names the page
        if "bad_alloc" in str(exc):  # ONNX Runtime out of memory under the sandbox's cap
            raise MemoryError from exc
        last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise IngestError(f"OCR failed on page {page.number + 1}: {last[:300]}") from exc
    if result.boxes is None or result.txts is None:
        return []
    x_off, y_off = page.rect.x0, page.rect.y0
    lines = []
    for box, text in zip(result.boxes, result.txts, strict=True):
        text = " ".join(str(text).replace("\x00", " ").split())
        if text:
            xs, ys = np.asarray(box)[:, 0] / zoom, np.asarray(box)[:, 1] / zoom
            lines.append((float(xs.min()) + x_off, float(ys.min()) + y_off, float(xs.max()) + x_off,
                          float(ys.max()) + y_off, text))
    return lines
