-- A glossary for the sparse side: analysts' words → the words filings use.
--
-- Questions say "capital expenditure", "income statement", "quick ratio"; 10-K statements say
-- "purchases of property, plant and equipment", "statements of operations", "total current
-- assets". When a question matches a pattern (case-insensitive regex), the expansion's words join
-- its sparse query (IDF-weighted like any other word); the dense side and the question are
-- unchanged. Rows are data: add a glossary for another domain with plain INSERTs.
create table if not exists query_glossary (
    pattern   text primary key,
    expansion text not null
);

insert into query_glossary (pattern, expansion) values
    ('\mcapex\M|capital expenditure', 'purchases of property plant equipment additions capital expenditures investing activities'),
    ('income statement|statement of income|p&l|profit and loss', 'consolidated statements of operations earnings income net revenue'),
    ('balance sheet|statement of financial position', 'consolidated balance sheets total assets liabilities shareholders equity'),
    ('cash ?flow statement|statement of cash ?flows', 'consolidated statements of cash flows operating investing financing activities'),
    ('quick ratio|acid.test', 'cash equivalents receivables total current assets total current liabilities balance sheets'),
    ('working capital|current ratio', 'total current assets total current liabilities balance sheets'),
    ('capital.intensive|fixed asset', 'property plant equipment net depreciation purchases total assets'),
    ('\mdpo\M|days payable', 'accounts payable cost of sales cost of goods sold'),
    ('\mdso\M|days sales outstanding|receivable turnover', 'accounts receivable net revenue'),
    ('\mdio\M|days inventory|inventory turnover', 'inventories merchandise inventories cost of sales'),
    ('cash conversion cycle', 'accounts payable accounts receivable inventories cost of sales revenue'),
    ('gross margin|gross profit', 'gross profit cost of sales revenue'),
    ('operating margin|operating income', 'operating income revenue'),
    ('net (profit )?margin|net income', 'net earnings income revenue'),
    ('\mebitda', 'operating income depreciation amortization'),
    ('free cash ?flow|\mfcf\M', 'net cash provided by operating activities purchases of property plant equipment'),
    ('revenue growth|change in revenue|top.?line', 'net revenue total revenues net sales'),
    ('dividend', 'dividends paid declared per share'),
    ('interest coverage', 'interest expense operating income'),
    ('effective tax rate', 'effective income tax rate provision for income taxes'),
    ('inventor(y|ies)', 'merchandise inventories')
on conflict (pattern) do update set expansion = excluded.expansion;
