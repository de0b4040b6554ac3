"""PDF ingestion: parse page by page, chunk into parents/children, embed, store as one transaction."""
