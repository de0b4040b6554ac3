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

-- As sql/011, plus the filing's heading rows. Replaces a filing's rows; the caller's transaction makes
-- it atomic.
create or replace function refresh_term_postings(p_document_id uuid) returns void language sql as $$
    delete from term_stats where document_id = p_document_id;
    insert into term_stats (document_id, owner_id, lexeme, ndoc, child_ids, weights)
    select c.document_id, c.owner_id, t.lexeme, count(*)::integer,
           array_agg(c.id order by c.id),
           array_agg(((case when 'A' = any (t.weights) then 2 else 1 end)
                      * (coalesce(array_length(t.positions, 1), 1) * 2.2
                         / (coalesce(array_length(t.positions, 1), 1) + 1.2)))::real order by c.id)
    from child_chunks c, unnest(c.tsv) t
    where c.document_id = p_document_id
    group by c.document_id, c.owner_id, t.lexeme;
    delete from heading_postings where document_id = p_document_id;
    insert into heading_postings (document_id, owner_id, heading_tsv, child_ids)
    select h.document_id, h.owner_id, h.heading_tsv, array_agg(h.id order by h.id)
    from (select c.document_id, c.owner_id, c.id, ts_filter(c.tsv, '{a}') as heading_tsv
          from child_chunks c
          where c.document_id = p_document_id) h
    where length(h.heading_tsv) > 0
    group by h.document_id, h.owner_id, h.heading_tsv;
$$;

-- Filings stored before this table existed (their term_stats rows are already right).
insert into heading_postings (document_id, owner_id, heading_tsv, child_ids)
select h.document_id, h.owner_id, h.heading_tsv, array_agg(h.id order by h.id)
from (select c.document_id, c.owner_id, c.id, ts_filter(c.tsv, '{a}') as heading_tsv
      from child_chunks c
      where not exists (select 1 from heading_postings x where x.document_id = c.document_id)) h
where length(h.heading_tsv) > 0
group by h.document_id, h.owner_id, h.heading_tsv;

create or replace function hybrid_search(
    p_owner_id        bigint,
    p_query_embedding vector(384),
    p_query_text      text,
    p_k               integer          default 5,
    p_document_ids    uuid[]           default null,
    p_mode            text             default 'hybrid',   -- hybrid | dense | sparse
    p_dense_weight    double precision default 1.0,
    p_sparse_weight   double precision default 1.0,
    p_rrf_k           integer          default 60,
    p_candidates      integer          default 50,
    p_per_parent      boolean          default true,       -- keep only the best child of each parent
    p_max_df          double precision default 0.4,        -- drop lexemes in more than this share of chunks
    p_fusion          text             default 'rrf',        -- rrf | score
    p_heading_weight  double precision default 1.0          -- the statement-heading leg; 0: off
)
returns table (
    child_id      bigint,
    parent_id     bigint,
    document_id   uuid,
    document_name text,
    page          integer,
    page_start    integer,
    page_end      integer,
    child_text    text,
    parent_text   text,
    score         double precision,
    dense_rank    integer,
    sparse_rank   integer,
    heading_rank  integer
)
language sql stable
as $$
with scope_size as (
    select greatest(coalesce(sum(d.children), 0), 1)::double precision as n
    from documents d
    where p_mode in ('hybrid', 'sparse')
      and d.owner_id = p_owner_id
      and (p_document_ids is null or d.id = any (p_document_ids))
),
terms as (
    select l.lexeme,
           ln(((select n from scope_size) - sum(t.ndoc) + 0.5) / (sum(t.ndoc) + 0.5) + 1) as idf
    from (select distinct unnest(tsvector_to_array(to_tsvector('english',
              coalesce(p_query_text, '') || ' ' || coalesce((select string_agg(g.expansion, ' ')
                                                             from query_glossary g
                                                             where p_query_text ~* g.pattern), ''))))
          as lexeme) l
    join term_stats t on t.lexeme = l.lexeme
                     and t.owner_id = p_owner_id
                     and (p_document_ids is null or t.document_id = any (p_document_ids))
    where p_mode in ('hybrid', 'sparse')
      and not exists (select 1 from query_stopwords s where s.lexeme = l.lexeme)
    group by l.lexeme
    having sum(t.ndoc) <= greatest(p_max_df * (select n from scope_size), 20)  -- small scopes keep all
),
dense as (
    select d.id, row_number() over (order by d.distance)::integer as rnk,
           1 - d.distance as raw
    from (
        select c.id, c.embedding <=> p_query_embedding as distance
        from child_chunks c
        where p_mode in ('hybrid', 'dense')
          and p_query_embedding is not null
          and c.owner_id = p_owner_id
          and (p_document_ids is null or c.document_id = any (p_document_ids))
        order by c.embedding <=> p_query_embedding
        limit p_candidates
    ) d
),
sparse as (
    -- From the postings (term_stats.child_ids / weights): one row per (filing, term) in scope,
    -- unnested, summing IDF x weight per chunk.
    select s.id, row_number() over (order by s.rank desc, s.id)::integer as rnk, s.rank as raw
    from (
        select p.child_id as id, sum(t.idf * p.weight) as rank
        from terms t
        join term_stats ts on ts.owner_id = p_owner_id and ts.lexeme = t.lexeme
        cross join lateral unnest(ts.child_ids, ts.weights) as p(child_id, weight)
        where p_mode in ('hybrid', 'sparse')
          and (p_document_ids is null or ts.document_id = any (p_document_ids))
        group by p.child_id
        order by rank desc
        limit p_candidates
    ) s
),
heading_query as (
    -- The glossary's heading phrases as one tsquery, each lexeme restricted to weight A (the heading).
    select string_agg('(' || regexp_replace(phraseto_tsquery('english', h.phrase)::text,
                                            '''([^'']+)''', '''\1'':A', 'g') || ')', ' | ')::tsquery as q
    from (select distinct unnest(g.headings) as phrase
          from query_glossary g
          where p_query_text ~* g.pattern) h
    where p_mode in ('hybrid', 'sparse') and p_heading_weight > 0
),
heading as (
    select h.id, row_number() over (order by h.distance nulls last, h.id)::integer as rnk
    from (
        -- The scope's distinct headings (heading_postings), matched, then their chunks by id.
        select c.id, c.embedding <=> p_query_embedding as distance
        from heading_query hq
        join heading_postings hp on hp.owner_id = p_owner_id
                                and (p_document_ids is null or hp.document_id = any (p_document_ids))
                                and hp.heading_tsv @@ hq.q
        cross join lateral unnest(hp.child_ids) as u(child_id)
        join child_chunks c on c.id = u.child_id and c.owner_id = p_owner_id
        where hq.q is not null
        order by 2 nulls last, c.id
        limit p_candidates
    ) h
),
normed as (
    select coalesce(dense.id, sparse.id, heading.id) as id,
           dense.rnk as dense_rank,
           sparse.rnk as sparse_rank,
           heading.rnk as heading_rank,
           (dense.raw - min(dense.raw) over ()) / nullif(max(dense.raw) over () - min(dense.raw) over (), 0)
             as dense_norm,
           (sparse.raw - min(sparse.raw) over ()) / nullif(max(sparse.raw) over () - min(sparse.raw) over (), 0)
             as sparse_norm
    from dense
    full outer join sparse on dense.id = sparse.id
    full outer join heading on heading.id = coalesce(dense.id, sparse.id)
),
fused as (
    select n.id, n.dense_rank, n.sparse_rank, n.heading_rank,
           case when p_fusion = 'score' then
               -- a heading match counts as a full-strength hit on its leg
               (p_dense_weight * coalesce(n.dense_norm, case when n.dense_rank is null then 0 else 1 end)
                + p_sparse_weight * coalesce(n.sparse_norm, case when n.sparse_rank is null then 0 else 1 end)
                + case when n.heading_rank is null then 0 else p_heading_weight end)
               / nullif(p_dense_weight + p_sparse_weight, 0)
           else
               coalesce(p_dense_weight / (p_rrf_k + n.dense_rank), 0)
                 + coalesce(p_sparse_weight / (p_rrf_k + n.sparse_rank), 0)
                 + coalesce(p_heading_weight / (p_rrf_k + n.heading_rank), 0)
           end as score
    from normed n
),
ranked as (
    select f.*, c.parent_id,
           row_number() over (partition by c.parent_id order by f.score desc, f.id) as nth_in_parent
    from fused f
    join child_chunks c on c.id = f.id
)
select c.id, c.parent_id, c.document_id, doc.name, c.page, p.page_start, p.page_end,
       c.text, p.text, r.score, r.dense_rank, r.sparse_rank, r.heading_rank
from ranked r
join child_chunks c on c.id = r.id
join parent_chunks p on p.id = c.parent_id
join documents doc on doc.id = c.document_id
where doc.owner_id = p_owner_id            -- ownership checked again on the document itself
  and doc.status = 'ready'
  and (not p_per_parent or r.nth_in_parent = 1)
order by r.score desc, c.id
limit p_k
$$;
