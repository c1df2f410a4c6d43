-- 015_saved_ref: where an idle or lifetime stop (or a close asked to) saved the sandbox's
-- unpushed work (SPEC §4 "Nothing lost at a stop").

ALTER TABLE sandboxes ADD COLUMN saved_ref text;
COMMENT ON COLUMN sandboxes.saved_ref IS 'the ref its unpushed work was saved to when it stopped (refs/namespaces/ephemeral/refs/heads/sandbox/<id>), NULL when nothing was saved';
GRANT SELECT (saved_ref) ON sandboxes TO sandboxd_auditor;
