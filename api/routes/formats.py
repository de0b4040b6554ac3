"""GET /api/formats: the accepted formats as the registry declares them (ingestion/formats/registry.py).

Public, like the page that asks for it: the web app (static files, no build step) builds its file
picker's accept list and its hint from this instead of a copy of its own.
"""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import SettingsDep
from ingestion.formats import registry

router = APIRouter(tags=["documents"])


class FormatOut(BaseModel):
    name: str = Field(description="the `format` a document of this kind reports")
    label: str = Field(description="what a person calls it")
    accepted: str = Field(description="how refusals list it")
    suffixes: list[str] = Field(description="file names it is offered under (the content decides)")
    media_type: str = Field(description="the file route's content type")
    unit: str = Field(description="what one page-like unit is: its citation labels start with this word")
    page_images: bool = Field(description="GET /api/documents/{id}/pages/{n}.png draws its units")
    limits: dict[str, bool | int | float] = Field(description="settings that bound its parsing, with their values")


class FormatsOut(BaseModel):
    formats: list[FormatOut] = Field(description="in the order sniffing tries them")
    accepted: str = Field(description="the accepted formats, as a refusal lists them")
    accept: str = Field(description="for a file input's `accept` attribute: every suffix")
    upload_max_mb: float = Field(description="the largest upload (UPLOAD_MAX_MB)")


@router.get("/api/formats", response_model=FormatsOut)
async def list_formats(settings: SettingsDep) -> FormatsOut:
    """The formats an upload may be, with what each is cut into and what bounds it."""
    known = registry.formats()
    return FormatsOut(
        formats=[FormatOut(name=f.name, label=f.label, accepted=f.accepted, suffixes=list(f.suffixes),
                           media_type=f.media_type, unit=f.unit, page_images=f.page_images,
                           limits={name.upper(): getattr(settings.ingestion, name) for name in f.limits})
                 for f in known],
        accepted=registry.accepted(),
        accept=",".join(s for f in known for s in f.suffixes),
        upload_max_mb=settings.bodies.upload_max_mb,
    )
