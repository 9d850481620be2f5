package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"quire"
	"quire/audit"
)

// The audit log in the pages (product.md section 8): the Activity page, for
// administrators, with the API's filters and its cursor; and, on each
// document page, who changed it last.

// activityPage is the Activity page.
type activityPage struct {
	layout
	Q        url.Values
	Since    string // the date fields as typed (yyyy-mm-dd)
	Until    string
	Prefixes []string
	Actions  []string
	Events   []quire.Event
	Next     string // the next page's URL, "" on the last
	First    string // the first page's URL with the same filters, "" on it
}

// activityPrefixes are the action groups offered as filters.
var activityPrefixes = []string{"auth.", "session.", "token.", "user.", "role.", "department.", "project.", "document.", "folder.",
	"attachment."}

// activityActions are the actions offered as filters, each exact.
var activityActions = []string{
	quire.ActionLogin, quire.ActionLoginFailed, quire.ActionLocked, quire.ActionLogout,
	quire.ActionPasswordChanged, quire.ActionPasswordResetRequested, quire.ActionPasswordReset, quire.ActionPasswordSetup,
	quire.ActionMFAEnabled, quire.ActionMFADisabled, quire.ActionSessionRevoked, quire.ActionTokenCreated, quire.ActionTokenRevoked,
	quire.ActionUserCreated, quire.ActionUserInvited, quire.ActionUserUpdated, quire.ActionUserDisabled, quire.ActionUserEnabled,
	quire.ActionUserUnlocked, quire.ActionRoleUpdated, quire.ActionDepartmentCreated, quire.ActionDepartmentUpdated,
	quire.ActionDepartmentDeleted, quire.ActionProjectCreated, quire.ActionProjectUpdated, quire.ActionProjectDeleted,
	quire.ActionProjectMemberAdded, quire.ActionProjectMemberRemoved, quire.ActionDocumentCreated, quire.ActionDocumentUpdated,
	quire.ActionDocumentDeleted, quire.ActionDocumentRestored, quire.ActionDocumentPurged, quire.ActionVersionRestored,
	quire.ActionDocumentExported,
	quire.ActionFolderCreated, quire.ActionFolderUpdated, quire.ActionFolderDeleted,
	quire.ActionAttachmentCreated, quire.ActionAttachmentDeleted,
	quire.ActionWebhookCreated, quire.ActionWebhookUpdated, quire.ActionWebhookDeleted,
	quire.ActionShareCreated, quire.ActionShareRevoked, quire.ActionSettingsUpdated,
}

var errNotAdmin = quire.Errorf(quire.EFORBIDDEN, "Only administrators may see the activity of the site.")

// handleActivity shows one page of the audit log. The filters are the
// API's (action, actorId, targetId, limit, cursor); since and until are
// dates in the reader's zone, until inclusive.
func handleActivity(s *server, l *audit.Service) actorFunc {
	return func(w http.ResponseWriter, r *http.Request, a quire.Actor) error {
		if !a.User.Role.Admin {
			return errNotAdmin
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			q = url.Values{}
		}
		p := activityPage{layout: s.section(r, &a, "activity", "Activity"), Q: q, Prefixes: activityPrefixes, Actions: activityActions}
		p.Since, p.Until = q.Get("since"), q.Get("until")
		params := audit.Params{Action: q.Get("action"), ActorID: q.Get("actorId"), TargetID: q.Get("targetId"),
			Limit: q.Get("limit"), Cursor: q.Get("cursor")}
		if params.Since, err = dayStart(p.Since, p.Loc, 0); err != nil {
			p.Fields["since"] = err.Error()
		}
		if params.Until, err = dayStart(p.Until, p.Loc, 1); err != nil {
			p.Fields["until"] = err.Error()
		}
		status := http.StatusOK
		// Asked even when a date is wrong, so that every wrong filter is
		// said at once; the events are shown only when all are right.
		page, err := l.List(r.Context(), a, params)
		var qe *quire.Error
		switch {
		case errors.As(err, &qe) && qe.Code == quire.EVALIDATION:
			maps.Copy(p.Fields, qe.Fields)
		case err != nil:
			return err
		case len(p.Fields) == 0:
			p.Events = page.Events
			if page.NextCursor != "" {
				next := cloneValues(q)
				next.Set("cursor", page.NextCursor)
				p.Next = "/activity?" + next.Encode()
			}
		}
		if len(p.Fields) > 0 {
			p.Error = "Some filters could not be read: correct them and show the activity again."
			status = http.StatusBadRequest
		}
		if q.Get("cursor") != "" {
			first := cloneValues(q)
			first.Del("cursor")
			p.First = "/activity?" + first.Encode()
		}
		return s.show(w, r, status, "activity.html", p)
	}
}

func cloneValues(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// dayStart turns a date (yyyy-mm-dd) of loc into the RFC 3339 time its
// day starts, plus days; "" stays "".
func dayStart(date string, loc *time.Location, days int) (string, error) {
	if date == "" {
		return "", nil
	}
	d, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return "", fmt.Errorf("must be a date (2026-11-26)")
	}
	return d.AddDate(0, 0, days).Format(time.RFC3339), nil
}

// eventDetails shows an event's details as "key: value" pairs, in key
// order, values as JSON unless they are text.
func eventDetails(details map[string]any) string {
	keys := make([]string, 0, len(details))
	for k := range details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		v, ok := details[k].(string)
		if !ok {
			b, _ := json.Marshal(details[k])
			v = string(b)
		}
		parts = append(parts, k+": "+v)
	}
	return strings.Join(parts, "; ")
}
