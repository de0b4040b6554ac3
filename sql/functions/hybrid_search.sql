-- hybrid_search(): dense (HNSW) top-N, sparse (BM25 over postings) top-N and the statement-heading
-- leg, fused by weighted Reciprocal Rank Fusion or by normalised scores. Its one body: change it
-- here (a repeatable file, re-applied when it changes; sql/__init__.py), never in sql/NNN_*.sql.
--
-- Each leg orders by its own score with LIMIT inside a subquery, so the dense leg of a large scope is
-- an HNSW index scan (a row_number() over the whole table would never use the index); a small
-- scope's (a filing's) is an exact scan of its chunks. Every leg is filtered by
-- owner (and optional documents) here, in SQL; with `hnsw.iterative_scan` on (set per transaction,
-- storage/search.py) a filtered dense scan still returns enough rows. A plain SQL function with one
-- statement is inlined by the planner, so EXPLAIN of a call shows the real plan.
-- Sparse: the question's lexemes, plus the expansions of matching glossary rows (query_glossary),
-- minus task words (query_stopwords) and minus lexemes held by more than p_max_df of the chunks in a
-- large scope, are ORed (an AND query would match almost nothing: analysts' questions rarely share
-- every word with the filing); each chunk scores the sum over the lexemes it holds of IDF x a
-- BM25-style weight, read from the postings in term_stats (sql/011_term_postings.sql, filled by
-- refresh_term_postings()).
-- Headings: glossary rows name the page headings where a metric's line items live
-- (sql/008_heading_leg.sql); chunks under a matching heading (heading_postings,
-- sql/020_heading_postings.sql) form the third list, ordered by dense distance, weighted by
-- p_heading_weight (0: off).
-- Fusion: p_fusion 'rrf' (weighted Reciprocal Rank Fusion: the sparse and heading legs with constant
-- p_rrf_k, the dense leg with its own p_dense_rrf_k, p_rrf_k when null; a small lexical k keeps
-- those legs' first places on top, a larger dense k lets the dense leg order what they leave close:
-- evals/results/fusion_cv.md) or 'score' (alpha-weighted min-max normalised scores,
-- alpha = p_dense_weight / (p_dense_weight + p_sparse_weight); sql/007_score_fusion.sql, evals/ablations.py).
--
-- Its arguments and columns changed across releases, and `create or replace` cannot change either:
-- every hybrid_search of this schema is dropped, then the current one created. The migrator then runs
-- sql/099_row_security.sql again, which revokes what a new function is granted by default.
do $$
declare
    f regprocedure;
begin
    for f in select p.oid::regprocedure from pg_proc p
             where p.proname = 'hybrid_search' and p.pronamespace = current_schema()::regnamespace
    loop
        execute format('drop function %s', f);
    end loop;
end $$;

create function hybrid_search(
    p_owner_ids       bigint[],         -- the owners read: a user's own, their workspaces' (member_spaces)
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
    p_heading_weight  double precision default 1.0,         -- the statement-heading leg; 0: off
    p_dense_rrf_k     integer          default null          -- the dense leg's RRF constant; null: p_rrf_k
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
    -- exact: the dense side measures every chunk of one filing, or of a few documents' chunks.
    -- 2000 chunks: about where the planner of a development-sized table turned from that scan to
    -- the graph by itself, so results there stay as they were (evals/results/search_scale_1m.md).
    select s.n, p_document_ids is not null and (cardinality(p_document_ids) = 1 or s.n <= 2000) as exact
    from (select greatest(coalesce(sum(d.children), 0), 1)::double precision as n
          from documents d
          where d.owner_id = any (p_owner_ids)
            and (p_document_ids is null or d.id = any (p_document_ids))) s
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
                     and t.owner_id = any (p_owner_ids)
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
        -- A small scope (scope_size.exact): every chunk measured, read through the (owner, document)
        -- index, so its results never depend on the planner's choice, which with other stats (a
        -- larger table) can be a filtered walk of the whole table's HNSW graph that misses some
        -- (tests/test_storage.py; evals/results/search_scale_1m.md). The OFFSET 0 keeps the HNSW
        -- index's order out of it.
        (select x.id, x.distance
         from (select c.id, c.embedding <=> p_query_embedding as distance
               from child_chunks c
               where p_mode in ('hybrid', 'dense')
                 and p_query_embedding is not null
                 and (select exact from scope_size)
                 and c.owner_id = any (p_owner_ids)
                 and c.document_id = any (p_document_ids)
               offset 0) x
         order by x.distance
         limit p_candidates)
        union all
        -- A larger scope: the HNSW graph, filtered by owner and documents.
        (select c.id, c.embedding <=> p_query_embedding as distance
         from child_chunks c
         where p_mode in ('hybrid', 'dense')
           and p_query_embedding is not null
           and not (select exact from scope_size)
           and c.owner_id = any (p_owner_ids)
           and (p_document_ids is null or c.document_id = any (p_document_ids))
         order by c.embedding <=> p_query_embedding
         limit p_candidates)
    ) d
),
sparse as (
    -- From the postings (term_stats.child_ids / weights): one row per (filing, term) in scope,
    -- unnested in step in the select list (cheaper per posting than a lateral function scan; the
    -- same rows in the same order, so the same sums), summing IDF x weight per chunk.
    select s.id, row_number() over (order by s.rank desc, s.id)::integer as rnk, s.rank as raw
    from (
        select p.child_id as id, sum(p.idf * p.weight) as rank
        from (select t.idf, unnest(ts.child_ids) as child_id, unnest(ts.weights) as weight  -- in step
              from terms t
              join term_stats ts on ts.owner_id = any (p_owner_ids) and ts.lexeme = t.lexeme
              where p_mode in ('hybrid', 'sparse')
                and (p_document_ids is null or ts.document_id = any (p_document_ids))) p
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
        join heading_postings hp on hp.owner_id = any (p_owner_ids)
                                and (p_document_ids is null or hp.document_id = any (p_document_ids))
                                and hp.heading_tsv @@ hq.q
        cross join lateral unnest(hp.child_ids) as u(child_id)
        join child_chunks c on c.id = u.child_id and c.owner_id = any (p_owner_ids)
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
               coalesce(p_dense_weight / (coalesce(p_dense_rrf_k, p_rrf_k) + n.dense_rank), 0)
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
where doc.owner_id = any (p_owner_ids)            -- ownership checked again on the document itself
  and doc.status = 'ready'
  and (not p_per_parent or r.nth_in_parent = 1)
order by r.score desc, c.id
limit p_k
$$;
