// Package userjson is USER of contract section 4, the JSON shape of a user,
// written once for the API (httpapi) and the command line's --json records
// (cmd/quire), so that both print a user the same way.
package userjson

import "quire"

// User is USER: department, departmentId and timezone are null when the
// user has none.
type User struct {
	ID           string  `json:"id"`
	Email        string  `json:"email"`
	Name         string  `json:"name"`
	Role         string  `json:"role"`
	RoleLabel    string  `json:"roleLabel"`
	Department   *string `json:"department"`
	DepartmentID *string `json:"departmentId"`
	Timezone     *string `json:"timezone"`
}

// Of returns u as USER.
func Of(u *quire.User) User {
	return User{
		ID:           u.ID,
		Email:        u.Email,
		Name:         u.Name,
		Role:         u.Role.Key,
		RoleLabel:    u.Role.Label,
		Department:   nullable(u.DepartmentName),
		DepartmentID: nullable(u.DepartmentID),
		Timezone:     nullable(u.Timezone),
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
