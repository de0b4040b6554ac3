-- hybrid_search(): dense (HNSW) top-N and full-text top-N fused by weighted Reciprocal Rank Fusion.
--
-- Each side orders by its own score with LIMIT inside a subquery, so the dense side is an HNSW
-- index scan (a row_number() over the whole table would never use the index). Both sides are
-- filtered by owner (and optional documents) here, in SQL; with `hnsw.iterative_scan` on (set per
-- connection) a filtered dense scan still returns enough rows. A plain SQL function with one
-- statement is inlined by the planner, so EXPLAIN of a call shows the real plan.
-- The sparse side ORs the question's lexemes: analysts' questions rarely share every word with
-- the filing, and an AND query would match almost nothing.
drop function if exists hybrid_search(bigint, vector, text, integer, uuid[], text, double precision,
                                       double precision, integer, integer, boolean);

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
    p_per_parent      boolean          default true        -- keep only the best child of each parent
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
    sparse_rank   integer
)
language sql stable
as $$
with query as (
    select replace(plainto_tsquery('english', coalesce(p_query_text, ''))::text, ' & ', ' | ')::tsquery as tsq
),
dense as (
    select d.id, row_number() over (order by d.distance)::integer as rnk
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
    select s.id, row_number() over (order by s.rank desc, s.id)::integer as rnk
    from (
        select c.id, ts_rank(c.tsv, query.tsq, 1) as rank
        from child_chunks c, query
        where p_mode in ('hybrid', 'sparse')
          and c.owner_id = p_owner_id
          and (p_document_ids is null or c.document_id = any (p_document_ids))
          and c.tsv @@ query.tsq
        order by rank desc
        limit p_candidates
    ) s
),
fused as (
    select coalesce(dense.id, sparse.id) as id,
           dense.rnk as dense_rank,
           sparse.rnk as sparse_rank,
           coalesce(p_dense_weight / (p_rrf_k + dense.rnk), 0)
             + coalesce(p_sparse_weight / (p_rrf_k + sparse.rnk), 0) as score
    from dense full outer join sparse on dense.id = sparse.id
),
ranked as (
    select f.*, c.parent_id,
           row_number() over (partition by c.parent_id order by f.score desc, f.id) as nth_in_parent
    from fused f
    join child_chunks c on c.id = f.id
)
select c.id, c.parent_id, c.document_id, doc.name, c.page, p.page_start, p.page_end,
       c.text, p.text, r.score, r.dense_rank, r.sparse_rank
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
