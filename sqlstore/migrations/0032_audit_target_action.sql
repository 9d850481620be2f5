-- The latest event of one action on one target, in one step: the document
-- page shows its document's last change (audit.Service.LastChange), which
-- walking audit_events_target newest first would find only after every
-- later event of the document (its comments' events name it as their
-- target), a walk that grows with the discussion at every view.
CREATE INDEX audit_events_target_action ON audit_events (target_id, action, at DESC, id DESC) WHERE target_id IS NOT NULL;
