"""Storage layer: Postgres (embedded or external), migrations, and the queries that run `sql/`.

Takes vectors, never makes them. Every query that reads user data is scoped by owner in SQL.
"""
