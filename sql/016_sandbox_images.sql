-- 016_sandbox_images: the image a repository's sandboxes run, and the one each sandbox ran
-- (SPEC §4 "What's inside"). Both hold a name from SANDBOXD_IMAGES, not an image reference:
-- the operator may point a name at a rebuilt image without touching the rows.

ALTER TABLE repositories ADD COLUMN sandbox_image text
    CHECK (sandbox_image ~ '^[a-z0-9][a-z0-9._-]{0,31}$');
COMMENT ON COLUMN repositories.sandbox_image IS 'the SANDBOXD_IMAGES name its sandboxes run when a create names none; NULL: the default image';

ALTER TABLE sandboxes ADD COLUMN image text;
COMMENT ON COLUMN sandboxes.image IS 'the SANDBOXD_IMAGES name it was created with; NULL for sandboxes made before 016';
GRANT SELECT (image) ON sandboxes TO sandboxd_auditor;
