-- Tables as data (ingestion/tables.py): every value cell of every table, with its row label, the
-- section path above it inside the table, its column's period, the table's scale and unit, the value
-- as written and as a number, and its box on the page. Written with the document's chunks (one
-- transaction), deleted with the document; every query names the owner (storage/tables.py).
create table if not exists table_cells (
    id            bigserial primary key,
    document_id   uuid not null references documents(id) on delete cascade,
    owner_id      bigint not null,
    page          integer not null,               -- 1-based unit index, as child_chunks.page
    table_key     text not null,                  -- "page.n": the n-th table on that page
    row_index     integer not null,               -- the row's place among the document's rows
    label         text not null,                  -- '' for a sum row without a label
    section       text[] not null default '{}',   -- label rows above it inside the table, outermost first
    section_text  text not null default '',       -- the same joined with ' › ' (what full text reads)
    caption       text not null default '',       -- the table's title
    column_index  integer,                        -- 0-based value column; null where it could not be placed
    period_label  text not null default '',       -- the column's header as written
    period_kind   text check (period_kind in ('year', 'quarter', 'ytd', 'instant')),
    fiscal_year   integer,
    quarter       integer check (quarter between 1 and 4),
    period_end    date,
    months        integer,                        -- 3, 6, 9, 12 for a duration
    scale         double precision not null default 1,  -- 1e3 for "in thousands"; value * scale = units
    unit          text not null default '',       -- USD, USD/share, %, shares, ratio, '' (not said)
    scale_words   text not null default '',       -- the caption's phrase, as written
    value_text    text not null,                  -- "(1,234)", "—", "12.5%"
    value         double precision not null,      -- the sign applied, in the table's scale; a dash is 0
    box           real[],                         -- [x0, y0, x1, y1] of the value on a PDF page, in points
    row_box       real[],                         -- the whole row
    child_ord     integer,                        -- child_chunks.ord of the chunk holding the row
    tsv           tsvector generated always as (
                      setweight(to_tsvector('english', label), 'A')
                      || setweight(to_tsvector('english', section_text), 'B')
                      || setweight(to_tsvector('english', caption), 'C')) stored
);
create index if not exists table_cells_owner_document_idx on table_cells (owner_id, document_id);
create index if not exists table_cells_tsv_idx on table_cells using gin (tsv);

-- The rules version a document's cells were read with (storage/tables.py TABLES_VERSION); null:
-- stored before tables were read, until `thotqen reindex --tables`.
alter table documents add column if not exists tables_version integer;

-- Locked like every table (sql/099_row_security.sql), here too: `supabase db push` onto a database
-- that already has 099 does not run 099 again.
alter table table_cells enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table table_cells from %s', api_roles);
        execute format('revoke all on sequence table_cells_id_seq from %s', api_roles);
    end if;
end $$;
