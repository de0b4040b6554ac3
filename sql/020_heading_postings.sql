-- The statement-heading leg of hybrid_search() reads a small per-filing table of distinct headings
-- instead of the full-text index over every chunk of every user.
--
-- The leg (sql/008_heading_leg.sql) matched `child_chunks.tsv @@ q`, q's lexemes restricted to weight A
-- (the heading). The GIN index ignores weights and owners, so it returned every chunk of every user
-- with those words anywhere in its text ("cash", "statement", "operations" are everywhere), and each
-- had its whole tsvector read again to check the weights and the phrase: the leg grew with the table
-- (evals/results/search_scale.md). heading_postings holds, per filing, one row per distinct heading:
-- its weight-A lexemes (ts_filter of the chunk's own tsvector, so exactly what the old match read)
-- and the ids of the chunks under it. A filing has about one heading per page, so the leg now reads
-- the scope's few hundred (within a filing) or few thousand (30 filings) small rows through the
-- (owner_id, document_id) index, whatever the size of the table, then fetches the matching chunks
-- by primary key. refresh_term_postings() (called when a filing's chunks are written) fills it.
create table if not exists heading_postings (
    document_id uuid not null references documents(id) on delete cascade,
    owner_id    bigint not null,
    heading_tsv tsvector not null,
    child_ids   bigint[] not null
);
create index if not exists heading_postings_owner_document_idx on heading_postings (owner_id, document_id);

-- Locked like every table (sql/099_row_security.sql), here too: `supabase db push` onto a database
-- that already has 099 does not run 099 again.
alter table heading_postings enable row level security;
do $$
declare
    api_roles text := (select string_agg(quote_ident(rolname), ', ') from pg_roles
                       where rolname in ('anon', 'authenticated'));
begin
    if api_roles is not null then
        execute format('revoke all on table heading_postings from %s', api_roles);
    end if;
end $$;

-- refresh_term_postings() fills it too: sql/functions/refresh_term_postings.sql.

-- Filings stored before this table existed (their term_stats rows are already right).
insert into heading_postings (document_id, owner_id, heading_tsv, child_ids)
select h.document_id, h.owner_id, h.heading_tsv, array_agg(h.id order by h.id)
from (select c.document_id, c.owner_id, c.id, ts_filter(c.tsv, '{a}') as heading_tsv
      from child_chunks c
      where not exists (select 1 from heading_postings x where x.document_id = c.document_id)) h
where length(h.heading_tsv) > 0
group by h.document_id, h.owner_id, h.heading_tsv;

-- hybrid_search()'s current body: sql/functions/hybrid_search.sql.
