"""Model-facing parts: LLM chain, embeddings, reranker, web search. No graph, no database."""
