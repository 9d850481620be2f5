-- Administration (product.md section 9): the first administrator's duty to
-- choose a password of its own, and a role's demand for a second factor
-- (stored and shown now, enforced with the second factor, issue 17).
ALTER TABLE users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;
ALTER TABLE roles ADD COLUMN require_mfa boolean NOT NULL DEFAULT false;
