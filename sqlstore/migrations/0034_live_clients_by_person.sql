-- The last numbers of live_clients are keyed by person and client id
-- (quire.LiveClientKey: "<user id>/<client id>"), since a client id is the
-- client's to choose and everyone on the document sees it. A row whose
-- last change is still kept (not yet in a version) takes its author's
-- key, so that a client reconnecting across the upgrade is not sent again
-- what it had accepted; the others, whose clients had their confirmations
-- long ago, keep the old key, never read again, and go with the first save
-- a day after their last change.
UPDATE live_clients SET client_id = (SELECT lc.user_id FROM live_changes lc
		WHERE lc.document_id = live_clients.document_id AND lc.seq = live_clients.at AND lc.client_id = live_clients.client_id)
	|| '/' || client_id
WHERE EXISTS (SELECT 1 FROM live_changes lc
	WHERE lc.document_id = live_clients.document_id AND lc.seq = live_clients.at AND lc.client_id = live_clients.client_id);
