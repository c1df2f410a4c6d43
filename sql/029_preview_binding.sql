-- 029_preview_binding: a preview is bound to the container it was made for and lives only
-- while its maker could make it (issue 32 A.6, docs/decisions/0079). The check (nginx's
-- auth_request, on every proxied request) now wants the sandbox's current container to be
-- the preview's, takes the address from the sandbox's row (sandboxes.agent_ip, 024) rather
-- than the preview's, refuses an address that another live container of the engine claims,
-- and reads the maker's standing on the repository; a change of roles or of an account
-- (auth_sandboxes_lost) deletes the previews whose maker lost it.
--
-- container_id stays NULL for a preview made by a host still on the old binary while the
-- hosts restart one at a time: such a preview is not served by a new binary (closed, never
-- guessed); the old rows are given their sandbox's container here.

ALTER TABLE previews ADD COLUMN container_id text;
UPDATE previews p SET container_id = s.container_id FROM sandboxes s WHERE s.id = p.sandbox_id;
COMMENT ON COLUMN previews.container_id IS 'the Docker container it was made for (its sandbox''s then): the check serves it only while its sandbox still has that container; NULL only for a preview made by a binary before 029, which is not served';
COMMENT ON COLUMN previews.addr IS 'the sandbox''s address on the sandbox network, as the engine reported it when the preview was made (never from a client); since 029 a record only: the check proxies to the sandbox''s current address (sandboxes.agent_ip)';

COMMENT ON COLUMN sandboxes.agent_ip IS 'its container''s IPv4 address on its network as the engine reported it at the start (the agent listens there, previews are proxied there), or at a preview''s create when the row lacked it or held another; NULL for a sandbox made before 024 or whose address was not known at the start';

-- The check's "no other live container claims this address", one index probe each.
CREATE INDEX sandboxes_live_addr ON sandboxes (agent_ip)
    WHERE state IN ('starting', 'ready') AND agent_ip IS NOT NULL;
CREATE INDEX warm_containers_live_addr ON warm_containers (agent_ip)
    WHERE state IN ('starting', 'ready') AND agent_ip IS NOT NULL;
-- The previews of one maker, for the delete when the maker loses access.
CREATE INDEX previews_account ON previews (account_id);
