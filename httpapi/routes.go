package httpapi

// routes registers every route of the API. Most maintenance starts with a
// URL: this is where to look first. s.idempotent marks the unsafe routes
// that take an Idempotency-Key.
func (s *Server) routes() {
	m := s.mux
	a, d := s.auth, s.docs

	m.Handle("GET /healthz", s.public(handleHealth()))
	m.Handle("GET /readyz", s.public(handleReady(s.store)))
	m.Handle("GET /metrics", s.handleMetrics())
	m.Handle("GET /api/openapi.json", s.public(handleOpenAPI()))

	m.Handle("POST /api/auth/login", s.public(handleLogin(a, s.cfg.SecureCookies, s.checkOrigin)))
	m.Handle("GET /api/auth/me", s.authed(handleMe()))
	m.Handle("POST /api/auth/logout", s.authed(handleLogout(a, s.cfg.SecureCookies)))
	m.Handle("POST /api/auth/forgot-password", s.public(handleForgotPassword(a)))
	m.Handle("POST /api/auth/reset-password", s.public(handleTokenPassword(a.ResetPassword, "Password has been reset")))
	m.Handle("POST /api/auth/setup-password", s.public(handleTokenPassword(a.SetupPassword, "Password set")))
	m.Handle("POST /api/auth/change-password", s.authed(handleChangePassword(a)))
	m.Handle("GET /api/auth/sessions", s.authed(handleSessionList(a)))
	m.Handle("DELETE /api/auth/sessions", s.authed(handleSessionDeleteOthers(a)))
	m.Handle("DELETE /api/auth/sessions/{id}", s.authed(handleSessionDelete(a, s.cfg.SecureCookies)))
	m.Handle("POST /api/auth/tokens", s.authed(handleTokenCreate(a)))
	m.Handle("GET /api/auth/tokens", s.authed(handleTokenList(a)))
	m.Handle("DELETE /api/auth/tokens/{id}", s.authed(handleTokenDelete(a)))

	// The second factor (product.md section 11; mfa.go).
	m.Handle("POST /api/auth/login/mfa", s.public(handleLoginMFA(a, s.cfg.SecureCookies, s.checkOrigin)))
	m.Handle("POST /api/auth/mfa/totp", s.authed(handleTOTPBegin(a.MFA())))
	m.Handle("POST /api/auth/mfa/totp/confirm", s.authed(handleTOTPConfirm(a.MFA())))
	m.Handle("DELETE /api/auth/mfa/totp", s.authed(handleTOTPDisable(a)))
	m.Handle("DELETE /api/admin/users/{id}/mfa", s.admin(handleAdminUserMFAReset(a.MFA())))
	// Export and import (product.md section 16). The import takes its
	// Idempotency-Key itself: it fingerprints the archive it spools.
	m.Handle("GET /api/documentation/export", s.authed(handleExport(s, s.xfer)))
	m.Handle("POST "+importPath, s.authed(handleImport(s, s.xfer)))
	// Passkeys (product.md section 11, passkey/): register, name and remove
	// them, and sign in with one alone.
	pk := s.passkeys
	m.Handle("GET /api/auth/passkeys", s.authed(handlePasskeyList(pk)))
	m.Handle("POST /api/auth/passkeys/register/begin", s.authed(handlePasskeyRegisterBegin(pk)))
	m.Handle("POST /api/auth/passkeys/register/finish", s.authed(handlePasskeyRegisterFinish(pk)))
	m.Handle("PATCH /api/auth/passkeys/{id}", s.authed(handlePasskeyRename(pk)))
	m.Handle("DELETE /api/auth/passkeys/{id}", s.authed(handlePasskeyDelete(pk)))
	m.Handle("POST /api/auth/passkeys/login/begin", s.public(handlePasskeyLoginBegin(pk, s.checkOrigin)))
	m.Handle("POST /api/auth/passkeys/login/finish", s.public(handlePasskeyLoginFinish(pk, a, s.cfg.SecureCookies, s.checkOrigin)))

	m.Handle("GET /api/documentation/documents", s.authed(handleDocumentList(d)))
	m.Handle("POST /api/documentation/documents", s.authed(s.idempotent(handleDocumentCreate(d))))
	m.Handle("POST "+bulkPath, s.authed(s.idempotent(handleDocumentBulk(d))))
	m.Handle("GET "+bulkPath, s.public(handleOnlyPost()))    // not a document id: 405, not 404
	m.Handle("PUT "+bulkPath, s.public(handleOnlyPost()))    // likewise
	m.Handle("DELETE "+bulkPath, s.public(handleOnlyPost())) // likewise
	m.Handle("GET /api/documentation/documents/{id}", s.authed(handleDocumentGet(d)))
	m.Handle("PUT /api/documentation/documents/{id}", s.authed(s.idempotent(handleDocumentUpdate(d))))
	m.Handle("DELETE /api/documentation/documents/{id}", s.authed(s.idempotent(handleDocumentDelete(d))))
	m.Handle("GET /api/documentation/documents/{id}/versions", s.authed(handleVersionList(d)))
	m.Handle("GET /api/documentation/documents/{id}/versions/{versionNumber}", s.authed(handleVersionGet(d)))
	m.Handle("POST /api/documentation/documents/{id}/versions/{versionNumber}/restore", s.authed(s.idempotent(handleVersionRestore(d))))
	m.Handle("GET /api/documentation/documents/{id}/versions/{versionNumber}/diff", s.authed(handleVersionDiff(d)))
	m.Handle("GET /api/documentation/documents/{id}/backlinks", s.authed(handleBacklinkList(d)))

	m.Handle("GET /api/documentation/trash", s.authed(handleTrashList(d)))
	m.Handle("POST /api/documentation/trash/{id}/restore", s.authed(s.idempotent(handleTrashRestore(d))))
	m.Handle("DELETE /api/documentation/trash/{id}", s.authed(s.idempotent(handleTrashPurge(d))))

	m.Handle("GET /api/documentation/folders", s.authed(handleFolderList(d)))
	m.Handle("POST /api/documentation/folders", s.authed(s.idempotent(handleFolderCreate(d))))
	m.Handle("PUT /api/documentation/folders/{id}", s.authed(s.idempotent(handleFolderUpdate(d))))
	m.Handle("DELETE /api/documentation/folders/{id}", s.authed(s.idempotent(handleFolderDelete(d))))

	// Files (product.md section 13). Uploads are exempt from --max-body
	// (uploadRoutes in attachments.go) and take an Idempotency-Key of their own.
	m.Handle("POST /api/documentation/documents/{id}/attachments", s.authed(handleAttachmentCreate(s, s.files)))
	m.Handle("GET /api/documentation/documents/{id}/attachments", s.authed(handleAttachmentList(s.files)))
	m.Handle("GET /api/documentation/attachments/{id}/content", s.authed(handleAttachmentContent(s.files)))
	m.Handle("DELETE /api/documentation/attachments/{id}", s.authed(s.idempotent(handleAttachmentDelete(s.files))))

	// Comments (product.md section 18; comments.go): seen exactly as
	// their document.
	cs := s.comments
	m.Handle("POST /api/documentation/documents/{id}/comments", s.authed(s.idempotent(handleCommentCreate(cs))))
	m.Handle("GET /api/documentation/documents/{id}/comments", s.authed(handleCommentList(cs)))
	m.Handle("PATCH /api/documentation/comments/{id}", s.authed(s.idempotent(handleCommentEdit(cs))))
	m.Handle("DELETE /api/documentation/comments/{id}", s.authed(s.idempotent(handleCommentDelete(cs))))
	m.Handle("POST /api/documentation/comments/{id}/resolve", s.authed(s.idempotent(handleCommentResolve(cs, true))))
	m.Handle("POST /api/documentation/comments/{id}/reopen", s.authed(s.idempotent(handleCommentResolve(cs, false))))
	m.Handle("PUT /api/documentation/comments/{id}/reactions/{emoji}", s.authed(s.idempotent(handleCommentReact(cs, true))))
	m.Handle("DELETE /api/documentation/comments/{id}/reactions/{emoji}", s.authed(s.idempotent(handleCommentReact(cs, false))))
	// Mentions, watching and notifications (product.md section 19;
	// notify.go): only about documents the caller sees now.
	ns := s.notify
	m.Handle("GET /api/documentation/documents/{id}/mentionable", s.authed(handleMentionable(ns)))
	m.Handle("PUT /api/documentation/documents/{id}/watch", s.authed(s.idempotent(handleWatch(ns, false, true))))
	m.Handle("DELETE /api/documentation/documents/{id}/watch", s.authed(s.idempotent(handleWatch(ns, false, false))))
	m.Handle("PUT /api/documentation/folders/{id}/watch", s.authed(s.idempotent(handleWatch(ns, true, true))))
	m.Handle("DELETE /api/documentation/folders/{id}/watch", s.authed(s.idempotent(handleWatch(ns, true, false))))
	m.Handle("GET /api/documentation/watching", s.authed(handleWatching(ns)))
	m.Handle("GET /api/documentation/notifications", s.authed(handleNotificationList(ns)))
	m.Handle("POST /api/documentation/notifications/read", s.authed(s.idempotent(handleNotificationRead(ns))))
	m.Handle("GET /api/auth/notification-settings", s.authed(handleNotificationSettingsGet(ns)))
	m.Handle("PUT /api/auth/notification-settings", s.authed(handleNotificationSettingsPut(ns)))
	// RFC 8058 one-click unsubscribe: the mail program POSTs to the link of
	// a notification mail; the signed token is the only credential.
	m.Handle("POST /api/unsubscribe", s.public(handleUnsubscribe(ns)))

	// Presence on a document edited live (product.md section 20; live.go):
	// this node's connections.
	if lv := s.live; lv != nil {
		m.Handle("GET /api/documentation/documents/{id}/presence", s.authed(handlePresence(lv)))
	}

	m.Handle("GET /api/admin/audit", s.authed(handleAuditList(s.audit)))

	// Administration (product.md section 9): administrators only.
	m.Handle("GET /api/admin/users", s.admin(handleAdminUserList(a)))
	m.Handle("POST /api/admin/users", s.admin(handleAdminUserInvite(a)))
	m.Handle("PATCH /api/admin/users/{id}", s.admin(handleAdminUserUpdate(a)))
	m.Handle("POST /api/admin/users/{id}/unlock", s.admin(handleAdminUserUnlock(a)))
	m.Handle("POST /api/admin/users/{id}/resend-invite", s.admin(handleAdminUserResendInvite(a)))
	m.Handle("GET /api/admin/departments", s.admin(handleAdminDepartmentList(a)))
	m.Handle("POST /api/admin/departments", s.admin(handleAdminDepartmentSave(a, true)))
	m.Handle("PATCH /api/admin/departments/{id}", s.admin(handleAdminDepartmentSave(a, false)))
	m.Handle("DELETE /api/admin/departments/{id}", s.admin(handleAdminDepartmentDelete(a)))
	m.Handle("GET /api/admin/projects", s.admin(handleAdminProjectList(a)))
	m.Handle("POST /api/admin/projects", s.admin(handleAdminProjectSave(a, true)))
	m.Handle("PATCH /api/admin/projects/{id}", s.admin(handleAdminProjectSave(a, false)))
	m.Handle("DELETE /api/admin/projects/{id}", s.admin(handleAdminProjectDelete(a)))
	m.Handle("PUT /api/admin/projects/{id}/members/{userId}", s.admin(handleAdminProjectMember(a, true)))
	m.Handle("DELETE /api/admin/projects/{id}/members/{userId}", s.admin(handleAdminProjectMember(a, false)))
	m.Handle("GET /api/admin/roles", s.admin(handleAdminRoleList(a)))
	m.Handle("PUT /api/admin/roles/{key}", s.admin(handleAdminRolePut(a)))

	// Webhooks (product.md section 16): administrators only.
	m.Handle("GET /api/admin/webhooks", s.admin(handleWebhookList(s.hooks)))
	m.Handle("POST /api/admin/webhooks", s.admin(handleWebhookCreate(s.hooks)))
	m.Handle("GET /api/admin/webhooks/{id}", s.admin(handleWebhookGet(s.hooks)))
	m.Handle("PATCH /api/admin/webhooks/{id}", s.admin(handleWebhookUpdate(s.hooks)))
	m.Handle("DELETE /api/admin/webhooks/{id}", s.admin(handleWebhookDelete(s.hooks)))
	m.Handle("GET /api/admin/webhooks/{id}/deliveries", s.admin(handleWebhookDeliveries(s.hooks)))

	// Share links (product.md section 21, shares.go); their public pages,
	// /s/{token}, are the web application's.
	if sh := s.shares; sh != nil {
		m.Handle("POST /api/documentation/documents/{id}/shares", s.authed(s.idempotentSealed(sh, handleShareCreate(sh))))
		m.Handle("GET /api/documentation/documents/{id}/shares", s.authed(handleShareList(sh)))
		m.Handle("DELETE /api/documentation/shares/{id}", s.authed(s.idempotent(handleShareRevoke(sh))))
		m.Handle("GET /api/admin/shares", s.admin(handleAdminShareList(sh)))
		m.Handle("GET /api/admin/settings", s.admin(handleAdminSettingsGet(sh)))
		m.Handle("PUT /api/admin/settings", s.admin(handleAdminSettingsPut(sh)))
	}
}
