-- hybrid_search() gains a second fusion method for the ablation study (evals/ablations.py):
-- 'rrf' (the default, unchanged: weighted Reciprocal Rank Fusion) or 'score': alpha-weighted
-- fusion of min-max normalised scores (cosine similarity on the dense side, the BM25-style sum on
-- the sparse side), alpha = p_dense_weight / (p_dense_weight + p_sparse_weight). Everything else is
-- as described in 005_hybrid_search.sql.
drop function if exists hybrid_search(bigint, vector, text, integer, uuid[], text, double precision,
                                       double precision, integer, integer, boolean, double precision);

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
    p_fusion          text             default 'rrf'         -- rrf | score
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
    -- From the inverted index (child_terms): an index-only scan per term, summing IDF x weight.
    select s.id, row_number() over (order by s.rank desc, s.id)::integer as rnk, s.rank as raw
    from (
        select ct.child_id as id, sum(t.idf * ct.weight) as rank
        from terms t
        join child_terms ct on ct.owner_id = p_owner_id and ct.lexeme = t.lexeme
        where p_mode in ('hybrid', 'sparse')
          and (p_document_ids is null or ct.document_id = any (p_document_ids))
        group by ct.child_id
        order by rank desc
        limit p_candidates
    ) s
),
normed as (
    select coalesce(dense.id, sparse.id) as id,
           dense.rnk as dense_rank,
           sparse.rnk as sparse_rank,
           (dense.raw - min(dense.raw) over ()) / nullif(max(dense.raw) over () - min(dense.raw) over (), 0)
             as dense_norm,
           (sparse.raw - min(sparse.raw) over ()) / nullif(max(sparse.raw) over () - min(sparse.raw) over (), 0)
             as sparse_norm
    from dense full outer join sparse on dense.id = sparse.id
),
fused as (
    select n.id, n.dense_rank, n.sparse_rank,
           case when p_fusion = 'score' then
               (p_dense_weight * coalesce(n.dense_norm, case when n.dense_rank is null then 0 else 1 end)
                + p_sparse_weight * coalesce(n.sparse_norm, case when n.sparse_rank is null then 0 else 1 end))
               / nullif(p_dense_weight + p_sparse_weight, 0)
           else
               coalesce(p_dense_weight / (p_rrf_k + n.dense_rank), 0)
                 + coalesce(p_sparse_weight / (p_rrf_k + n.sparse_rank), 0)
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
