"""Who a caller is: passwords, the server's own JWTs and Supabase Auth tokens (security.py). Below the
server and the composition root, which builds the one `Tokens` of a process (runtime.py)."""
