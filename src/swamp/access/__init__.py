"""Access rules: who may do what (grants), the API tokens that say who a
caller is, and the groups that gather them. Rules over maps handed in:
nothing here opens a datastore session (app/access.py reads and writes the
access documents; app/access_admin.py and app/access_tokens.py are the use
cases, app/enforced_access.py what a server enforces)."""
