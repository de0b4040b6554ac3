-- Core schema: users, documents, ingestion jobs, parent/child chunks.
create extension if not exists vector;

create table if not exists users (
    id          bigserial primary key,
    username    text not null unique,
    created_at  timestamptz not null default now()
);

create table if not exists documents (
    id            uuid primary key default gen_random_uuid(),
    owner_id      bigint not null references users(id) on delete cascade,
    name          text not null,
    content_hash  text not null,                 -- sha256 of the file bytes; dedupe is per owner
    size_bytes    bigint not null,
    status        text not null default 'queued'
                  check (status in ('queued', 'processing', 'ready', 'failed')),
    pages         integer,
    error         text,
    created_at    timestamptz not null default now(),
    updated_at    timestamptz not null default now(),
    unique (owner_id, content_hash)
);

create table if not exists document_jobs (
    id           uuid primary key default gen_random_uuid(),
    document_id  uuid not null references documents(id) on delete cascade,
    owner_id     bigint not null references users(id) on delete cascade,
    status       text not null default 'queued'
                 check (status in ('queued', 'processing', 'done', 'failed')),
    stage        text not null default 'queued',
    percent      real not null default 0 check (percent between 0 and 100),
    error        text,
    attempts     integer not null default 0,
    created_at   timestamptz not null default now(),
    updated_at   timestamptz not null default now()
);
create index if not exists document_jobs_document_idx on document_jobs (document_id);
create index if not exists document_jobs_status_idx on document_jobs (status) where status <> 'done';

create table if not exists parent_chunks (
    id          bigserial primary key,
    document_id uuid not null references documents(id) on delete cascade,
    owner_id    bigint not null,
    ord         integer not null,
    page_start  integer not null,               -- 1-based, inclusive
    page_end    integer not null,
    text        text not null
);
create index if not exists parent_chunks_document_idx on parent_chunks (document_id);

create table if not exists child_chunks (
    id          bigserial primary key,
    parent_id   bigint not null references parent_chunks(id) on delete cascade,
    document_id uuid not null references documents(id) on delete cascade,
    owner_id    bigint not null,
    ord         integer not null,
    page        integer not null,               -- 1-based; a child never spans pages
    heading     text not null default '',       -- document/page context, embedded and indexed with the text
    text        text not null,
    embedding   vector(384) not null,
    tsv         tsvector
);
create index if not exists child_chunks_owner_document_idx on child_chunks (owner_id, document_id);
create index if not exists child_chunks_parent_idx on child_chunks (parent_id);
create index if not exists child_chunks_embedding_idx
    on child_chunks using hnsw (embedding vector_cosine_ops) with (m = 16, ef_construction = 64);
create index if not exists child_chunks_tsv_idx on child_chunks using gin (tsv);

-- The full-text vector follows the text: a trigger, sql/functions/child_chunks_tsv_update.sql.
