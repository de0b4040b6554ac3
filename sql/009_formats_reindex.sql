-- Formats beyond PDF, OCR'd pages, and the embedding model's identity (ingestion/formats, ingestion/ocr.py,
-- storage/embedding_index.py).

-- What the file is; which model embedded its chunks (name:dimension:backend, e.g. all-MiniLM-L6-v2:384:torch).
alter table documents add column if not exists format text not null default 'pdf';
alter table documents add column if not exists embedding_model text;
alter table documents add column if not exists ocr_pages integer not null default 0;

-- A chunk's page is its unit's index; the label is what a citation names ('page 4', 'slide 4',
-- 'sheet Revenue', 'section 2.1'); null on chunks stored before this migration (PDF pages).
-- ocr: the text was recognised from the rendered page. boxes: its lines on a PDF page,
-- [[x0, y0, x1, y1], ...] in PDF points from the top-left corner, for highlighting a citation.
alter table child_chunks add column if not exists page_label text;
alter table child_chunks add column if not exists ocr boolean not null default false;
alter table child_chunks add column if not exists boxes jsonb;

-- Each unit of a document with its text, so a page view can show units that have no page image.
create table if not exists document_pages (
    document_id  uuid not null references documents(id) on delete cascade,
    owner_id     bigint not null,
    page         integer not null,                 -- 1-based unit index, as child_chunks.page
    label        text not null,
    title        text not null default '',
    ocr          boolean not null default false,
    text         text not null,
    primary key (document_id, page)
);

-- The one model whose vectors the index holds. A process embedding with another model is refused
-- until `thotqen reindex` has re-embedded every chunk, so no search ever compares two models' vectors.
create table if not exists embedding_index (
    singleton   boolean primary key default true check (singleton),
    model       text not null,
    dimension   integer not null check (dimension > 0),
    updated_at  timestamptz not null default now()
);

-- Vectors of the next model, staged document by document by `thotqen reindex` (resumable); swapped
-- into child_chunks in one transaction once every chunk has one.
create table if not exists reindex_vectors (
    child_id     bigint primary key references child_chunks(id) on delete cascade,
    document_id  uuid not null references documents(id) on delete cascade,
    owner_id     bigint not null,
    model        text not null,
    embedding    vector not null
);
create index if not exists reindex_vectors_document_idx on reindex_vectors (document_id);
