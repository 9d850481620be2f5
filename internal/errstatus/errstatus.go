// Package errstatus is the one table of HTTP statuses of quire's error codes
// (contract section 3), shared by the API (httpapi) and the pages (web), so
// that both answer a refusal with the same status.
package errstatus

import (
	"net/http"

	"quire"
)

// Of returns the HTTP status of an error code, and false for a code the
// table does not name (ECONFLICT among them: the API answers a uniqueness
// clash as a VALIDATION_ERROR, 400).
func Of(code string) (int, bool) {
	status, ok := statuses[code]
	return status, ok
}

var statuses = map[string]int{
	quire.EINVALIDJSON:           http.StatusBadRequest,
	quire.EVALIDATION:            http.StatusBadRequest,
	quire.EINVALIDTOKEN:          http.StatusBadRequest,
	quire.EWEAKPASSWORD:          http.StatusBadRequest,
	quire.EINVALIDCURRENT:        http.StatusBadRequest,
	quire.EINVALIDCREDENTIALS:    http.StatusUnauthorized,
	quire.EUNAUTHORIZED:          http.StatusUnauthorized,
	quire.EFORBIDDEN:             http.StatusForbidden,
	quire.ECROSSORIGIN:           http.StatusForbidden,
	quire.ENOTFOUND:              http.StatusNotFound,
	quire.EMETHODNOTALLOWED:      http.StatusMethodNotAllowed,
	quire.EDOCUMENTCONFLICT:      http.StatusConflict,
	quire.EFOLDERNOTEMPTY:        http.StatusConflict,
	quire.ELASTADMIN:             http.StatusConflict,
	quire.EINUSE:                 http.StatusConflict,
	quire.ENOTINVITED:            http.StatusConflict,
	quire.EPAYLOADTOOLARGE:       http.StatusRequestEntityTooLarge,
	quire.EUNSUPPORTEDMEDIATYPE:  http.StatusUnsupportedMediaType,
	quire.ETOOMANYATTEMPTS:       http.StatusTooManyRequests,
	quire.EACCOUNTLOCKED:         http.StatusTooManyRequests,
	quire.EUNAVAILABLE:           http.StatusServiceUnavailable,
	quire.EIDEMPOTENCYKEYREUSED:  http.StatusUnprocessableEntity,
	quire.EIDEMPOTENCYINPROGRESS: http.StatusConflict,
	quire.EPASSWORDLOGINDISABLED: http.StatusForbidden, // single sign-on
	// The second factor (product.md section 11).
	quire.EMFASETUPREQUIRED: http.StatusForbidden,
	quire.EINVALIDMFACODE:   http.StatusUnauthorized,
	quire.EINVALIDMFATOKEN:  http.StatusUnauthorized,
	quire.EMFAENABLED:       http.StatusConflict,
	// Comments (product.md section 18): a thread or a reply too many.
	quire.ELIMITREACHED: http.StatusConflict,
}
