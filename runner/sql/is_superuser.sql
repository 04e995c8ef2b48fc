-- is_superuser: whether the session's role may switch the session user (SET SESSION
-- AUTHORIZATION needs a superuser).
SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = session_user
