package httpapi

import (
	"context"
	"net/http"
	"time"

	"quire"
)

func handleHealth() apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}

// readyRetryAfter is the Retry-After of a 503 from /readyz.
const readyRetryAfter = 5 * time.Second

// handleReady answers 503 while the database does not answer within two
// seconds, or the store reports itself unavailable (a SQLite disk found
// full by a write, until a write succeeds again), so a load balancer stops
// sending requests to this node.
func handleReady(store Store) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := store.Ping(ctx); err != nil {
			// Retry-After tells a load balancer or a client when to ask
			// again; the check itself is cheap.
			if quire.ErrorCode(err) == quire.EUNAVAILABLE {
				return &quire.Error{Code: quire.EUNAVAILABLE, Message: quire.ErrorMessage(err), RetryAfter: readyRetryAfter}
			}
			return &quire.Error{Code: quire.EUNAVAILABLE, Message: "The database is unreachable", RetryAfter: readyRetryAfter}
		}
		return writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}
}
