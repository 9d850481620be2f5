-- One row per accepted reset-password or setup-password request, whatever
-- its outcome, for the per-address window of auth.redeemPerAddr (the
-- forgot-password requests have reset_requests).
CREATE TABLE redeem_requests (
	id   TEXT PRIMARY KEY,
	addr TEXT NOT NULL,
	at   {{.Time}}
);
CREATE INDEX redeem_requests_addr ON redeem_requests (addr, at);
CREATE INDEX redeem_requests_at ON redeem_requests (at);
