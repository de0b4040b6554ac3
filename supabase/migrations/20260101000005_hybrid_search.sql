-- hybrid_search(): dense (HNSW) top-N and full-text top-N fused by weighted Reciprocal Rank Fusion.
--
-- Each side orders by its own score with LIMIT inside a subquery, so the dense side is an HNSW
-- index scan (a row_number() over the whole table would never use the index). Both sides are
-- filtered by owner (and optional documents) here, in SQL; with `hnsw.iterative_scan` on (set per
-- connection) a filtered dense scan still returns enough rows. A plain SQL function with one
-- statement is inlined by the planner, so EXPLAIN of a call shows the real plan.
-- The sparse side is a small BM25: the question's lexemes, minus task words (query_stopwords) and
-- minus lexemes held by more than p_max_df of the chunks in a large scope (term_stats), are ORed; each
-- matching chunk scores the sum over the lexemes it holds of IDF x a BM25-style weight (term
-- frequency saturation, doubled in the heading), read from the inverted index child_terms. An AND query would match almost nothing: analysts' questions rarely share
-- every word with the filing. Glossary expansions (query_glossary) join the sparse query.
drop function if exists hybrid_search(bigint, vector, text, integer, uuid[], text, double precision,
                                       double precision, integer, integer, boolean);
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
    p_max_df          double precision default 0.4         -- drop lexemes in more than this share of chunks
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
    -- From the inverted index (child_terms): an index-only scan per term, summing IDF x weight.
    select s.id, row_number() over (order by s.rank desc, s.id)::integer as rnk
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
