package postgres

// hasSecondFactor is the one condition that says a user (u.id) has a
// second factor, a confirmed TOTP or a passkey. The store's operations of
// the second factor are written once in package sqlstore (mfa.go), which
// holds this condition too; this copy stays for admin.go's list of users
// until that list moves there.
const hasSecondFactor = `(EXISTS (SELECT 1 FROM mfa_totp f WHERE f.user_id = u.id AND f.confirmed_at IS NOT NULL)
	OR EXISTS (SELECT 1 FROM passkeys pk WHERE pk.user_id = u.id))`
