-- Collections and search (issue 27, after 027_chat_feedback was released: the one allowed second
-- file of the issue). Independent of 027_chat_feedback, so either order works (a fresh database
-- applies this one first: "027_b" sorts before "027_c").

-- A named group of one owner's documents ("2023 filings"). A chat over a collection reads its
-- members when each question is asked, so a document added later is searched from then on.
create table if not exists collections (
    id          uuid primary key default gen_random_uuid(),
    owner_id    bigint not null references users(id) on delete cascade,
    name        text not null check (length(name) between 1 and 200),
    created_at  timestamptz not null default now(),
    updated_at  timestamptz not null default now(),
    unique (owner_id, name)
);
create index if not exists collections_owner_idx on collections (owner_id, name, id);

-- Members: every insert selects the collection and the documents by the same owner
-- (storage/collections.py), so a collection never holds someone else's document.
create table if not exists collection_documents (
    collection_id  uuid not null references collections(id) on delete cascade,
    document_id    uuid not null references documents(id) on delete cascade,
    added_at       timestamptz not null default now(),
    primary key (collection_id, document_id)
);
create index if not exists collection_documents_document_idx on collection_documents (document_id);

-- A chat over a collection (document_ids stays null). Deleting the collection first copies its
-- members into the chat's document_ids (storage/collections.delete_collection), so the chat keeps
-- its scope; the foreign key only backs that up.
alter table chats add column if not exists collection_id uuid references collections(id) on delete set null;
create index if not exists chats_collection_idx on chats (collection_id) where collection_id is not null;

-- Full-text search over the owner's chats (storage/finder.py): one tsvector per message, kept by
-- Postgres itself, and its GIN index. 'english' so "revenues" finds "revenue".
alter table messages add column if not exists search_tsv tsvector
    generated always as (to_tsvector('english', content)) stored;
create index if not exists messages_search_idx on messages using gin (search_tsv);

alter table collections enable row level security;
alter table collection_documents enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table collections, collection_documents from %s', api_roles);
    end if;
end $$;
