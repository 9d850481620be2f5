package web

// routes registers every page. Most maintenance starts with a URL: this is
// where to look first.
func (s *server) routes() {
	m := s.mux
	a, d := s.auth, s.docs

	m.Handle("GET /{$}", s.public(handleHome(s)))
	m.Handle("GET /static/", s.serveStatic())

	m.Handle("GET /login", s.public(handleLoginForm(s)))
	m.Handle("POST /login", s.public(handleLogin(s, a)))
	m.Handle("POST /logout", s.public(handleLogout(s, a)))
	m.Handle("GET /forgot-password", s.public(handleForgotForm(s)))
	m.Handle("POST /forgot-password", s.public(handleForgot(s, a)))
	m.Handle("GET /reset-password", s.public(handleTokenForm(s, resetFlow)))
	m.Handle("POST /reset-password", s.public(handleTokenSubmit(s, a, resetFlow)))
	m.Handle("GET /setup-password", s.public(handleTokenForm(s, setupFlow)))
	m.Handle("POST /setup-password", s.public(handleTokenSubmit(s, a, setupFlow)))
	m.Handle("GET /welcome", s.signedIn(handleWelcome(s)))
	m.Handle("GET /account/password", s.signedIn(handleChangePasswordForm(s)))
	m.Handle("POST /account/password", s.signedIn(handleChangePassword(s, a)))
	m.Handle("GET /account", s.signedIn(handleAccount(s)))
	m.Handle("POST /account/tokens", s.signedIn(handleTokenCreate(s, a)))
	m.Handle("POST /account/tokens/{id}/revoke", s.signedIn(handleTokenRevoke(a)))
	m.Handle("POST /account/sessions/{id}/revoke", s.signedIn(handleSessionRevoke(s, a)))
	m.Handle("POST /account/sessions/revoke-others", s.signedIn(handleOtherSessionsRevoke(a)))

	// Passkeys (passkeys.go): registering one is static/passkey.js calling
	// the API's /api/auth/passkeys endpoints; so is signing in with one.
	if pk := s.cfg.Passkeys; pk != nil {
		m.Handle("POST /account/passkeys/{id}/rename", s.signedIn(handlePasskeyRename(s, pk)))
		m.Handle("POST /account/passkeys/{id}/remove", s.signedIn(handlePasskeyRemove(pk)))
	}

	m.Handle("GET /documents", s.signedIn(handleDocumentList(s, d)))
	m.Handle("GET /documents/new", s.signedIn(handleDocumentNew(s, d)))
	m.Handle("POST /documents", s.signedIn(handleDocumentCreate(s, d)))
	m.Handle("POST /documents/bulk", s.signedIn(handleDocumentBulk(s, d))) // bulk.go: the list's bulk change
	m.Handle("GET /documents/{id}", s.signedIn(handleDocumentView(s, d)))
	m.Handle("GET /documents/{id}/edit", s.signedIn(handleDocumentEdit(s, d)))
	m.Handle("POST /documents/{id}", s.signedIn(handleDocumentUpdate(s, d)))
	m.Handle("GET /documents/{id}/delete", s.signedIn(handleDocumentDeleteForm(s, d)))
	m.Handle("POST /documents/{id}/delete", s.signedIn(handleDocumentDelete(d)))
	m.Handle("GET /documents/{id}/versions", s.signedIn(handleVersionList(s, d)))
	m.Handle("GET /documents/{id}/versions/{n}", s.signedIn(handleVersionView(s, d)))
	m.Handle("GET /documents/{id}/versions/{n}/diff", s.signedIn(handleVersionDiff(s, d)))
	m.Handle("POST /documents/{id}/versions/{n}/restore", s.signedIn(handleVersionRestore(s, d)))
	m.Handle("GET /documents/{id}/compare", s.signedIn(handleVersionCompare(s, d)))

	// Live editing (live.go): the document's WebSocket.
	if lv := s.cfg.Live; lv != nil {
		m.Handle("GET /documents/{id}/live", handleLive(s, lv))
	}

	// The editor's live preview (preview.go).
	m.Handle("POST /preview", s.signedIn(handlePreview(s)))

	m.Handle("GET /trash", s.signedIn(handleTrashList(s, d)))
	m.Handle("POST /trash/{id}/restore", s.signedIn(handleTrashRestore(s, d)))
	m.Handle("GET /trash/{id}/delete", s.signedIn(handlePurgeForm(s, d)))
	m.Handle("POST /trash/{id}/delete", s.signedIn(handlePurge(d)))

	m.Handle("GET /folders", s.signedIn(handleFolderList(s, d)))
	m.Handle("POST /folders", s.signedIn(handleFolderCreate(s, d)))
	m.Handle("GET /folders/{id}", s.signedIn(handleFolderView(s, d)))
	m.Handle("POST /folders/{id}", s.signedIn(handleFolderUpdate(s, d)))
	m.Handle("POST /folders/{id}/delete", s.signedIn(handleFolderDelete(s, d)))

	// Comments beside the text (comments.go): plain forms, each sent back
	// to the document page at its thread.
	if cs := s.cfg.Comments; cs != nil {
		m.Handle("POST /documents/{id}/comments", s.signedIn(handleCommentCreate(s, d, cs)))
		m.Handle("GET /documents/{id}/comments/{cid}", s.signedIn(handleCommentThread(s, d, cs)))
		m.Handle("POST /documents/{id}/comments/{cid}/edit", s.signedIn(handleCommentEdit(s, d, cs)))
		m.Handle("POST /documents/{id}/comments/{cid}/delete", s.signedIn(handleCommentDelete(s, cs)))
		m.Handle("POST /documents/{id}/comments/{cid}/resolve", s.signedIn(handleCommentResolve(cs, true)))
		m.Handle("POST /documents/{id}/comments/{cid}/reopen", s.signedIn(handleCommentResolve(cs, false)))
		m.Handle("POST /documents/{id}/comments/{cid}/reactions", s.signedIn(handleCommentReact(cs)))
	}
	// Notifications (notify.go): the bell's stream, the notifications
	// page, and Watch and Unwatch as plain forms.
	if ns := s.cfg.Notify; ns != nil {
		m.Handle("GET /notifications/stream", handleNotificationStream(s, ns))
		m.Handle("GET /notifications", s.signedIn(handleNotificationList(s, ns)))
		m.Handle("POST /notifications/read", s.signedIn(handleNotificationRead(ns, true)))
		m.Handle("POST /notifications/{id}/read", s.signedIn(handleNotificationRead(ns, false)))
		m.Handle("POST /documents/{id}/watch", s.signedIn(handleWatch(ns, false, true)))
		m.Handle("POST /documents/{id}/unwatch", s.signedIn(handleWatch(ns, false, false)))
		m.Handle("POST /folders/{id}/watch", s.signedIn(handleWatch(ns, true, true)))
		m.Handle("POST /folders/{id}/unwatch", s.signedIn(handleWatch(ns, true, false)))
	}
	if s.cfg.Files != nil {
		m.Handle("POST /documents/{id}/files/{file}/delete", s.signedIn(handleFileDelete(s.cfg.Files)))
	}
	if s.cfg.Audit != nil {
		m.Handle("GET /activity", s.signedIn(handleActivity(s, s.cfg.Audit)))
	}
	s.adminRoutes() // admin.go: the Administration area, /admin/...
	s.mfaRoutes()   // mfa.go: the second factor
	if s.cfg.Transfer != nil {
		s.transferRoutes() // transfer.go: the Import page
	}
	s.ssoRoutes() // sso.go: single sign-on, /auth/oidc/...
	// Share links (shares_manage.go): the Share dialog of a document and
	// the Shares section of the Administration area. Their public pages,
	// /s/..., are served before this mux (shares.go, web.go).
	s.shareRoutes()

	m.Handle("/", s.notFound())
}
