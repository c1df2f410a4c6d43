-- 005_push_failed: a ref the hook accepted that git then could not update (a full disk, a
-- lock held by another writer) gets a second git.push.ref row from the same request, with
-- status 500 and result 'failed' (the first row stays: the log is append-only). The refs a
-- push changed are those accepted without a failed row of the same request_id.

COMMENT ON COLUMN audit_log.status IS 'HTTP status of the request; git.push.ref: 200 accepted, 403 refused, 500 failed (accepted, then git could not update the ref)';
COMMENT ON VIEW audit_pushes IS 'every ref update pushed over git, accepted, refused or failed (git.push.ref rows; a failed ref has its accepted row and a failed one of the same request_id); order by repository, ref, at';
COMMENT ON COLUMN audit_pushes.result IS 'accepted, refused, or failed (git could not update a ref the hook accepted)';
COMMENT ON COLUMN audit_pushes.reason IS 'why it was refused or failed';
