-- scope_roles: two roles @A@ and @B@ that hold only the producer role @P@, created inside the
-- case's transaction (rolled back with it) for the job_routing scope case.
CREATE ROLE @A@ NOLOGIN;
CREATE ROLE @B@ NOLOGIN;
GRANT @P@ TO @A@, @B@;
