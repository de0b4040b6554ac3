-- hybrid_search() gains a third ranked list: the statement-heading leg.
--
-- A question that names a statement ("relying on the cash flow statement") or a metric computed
-- from one (DPO, quick ratio, gross margin) is answered on the statement's page, yet MD&A prose
-- about the same metric outranks that page on both other legs (evals/results/retrieval_failures.md):
-- MiniLM embeds a block of line items poorly, and the statement's words are everywhere. Glossary
-- rows now also name the page headings where the metric's line items live (query_glossary.headings,
-- phrases such as 'statements of cash flows'). Chunks whose page heading holds one of those phrases
-- (a phrase match restricted to the heading's weight-A lexemes, so the GIN index serves it) form the
-- third list, ordered by dense distance to the question, and join the fusion with weight
-- p_heading_weight (0 switches the leg off). A question matching no glossary row is unaffected.
alter table query_glossary add column if not exists headings text[] not null default '{}';

update query_glossary g set headings = v.headings
from (values
    ('\mcapex\M|capital expenditure', array['statements of cash flows']),
    ('income statement|statement of income|p&l|profit and loss',
     array['statements of operations', 'statements of income', 'statements of earnings', 'income statements']),
    ('balance sheet|statement of financial position',
     array['balance sheets', 'statements of financial position', 'statements of financial condition']),
    ('cash ?flow statement|statement of cash ?flows', array['statements of cash flows']),
    ('quick ratio|acid.test', array['balance sheets', 'statements of financial position']),
    ('working capital|current ratio', array['balance sheets', 'statements of financial position']),
    ('capital.intensive|fixed asset',
     array['balance sheets', 'statements of cash flows', 'statements of operations', 'statements of income',
           'statements of earnings']),
    ('\mdpo\M|days payable',
     array['balance sheets', 'statements of operations', 'statements of income', 'statements of earnings']),
    ('\mdso\M|days sales outstanding|receivable turnover',
     array['balance sheets', 'statements of operations', 'statements of income', 'statements of earnings']),
    ('\mdio\M|days inventory|inventory turnover',
     array['balance sheets', 'statements of operations', 'statements of income', 'statements of earnings']),
    ('cash conversion cycle',
     array['balance sheets', 'statements of operations', 'statements of income', 'statements of earnings']),
    ('gross margin|gross profit', array['statements of operations', 'statements of income', 'statements of earnings']),
    ('operating margin|operating income',
     array['statements of operations', 'statements of income', 'statements of earnings']),
    ('net (profit )?margin|net income', array['statements of operations', 'statements of income', 'statements of earnings']),
    ('free cash ?flow|\mfcf\M', array['statements of cash flows']),
    ('revenue growth|change in revenue|top.?line',
     array['statements of operations', 'statements of income', 'statements of earnings']),
    ('interest coverage', array['statements of operations', 'statements of income', 'statements of earnings'])
) as v(pattern, headings)
where g.pattern = v.pattern;

-- The function's current body: sql/functions/hybrid_search.sql.
