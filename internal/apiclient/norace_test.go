//go:build !race && !apiclient

package apiclient_test

// raceFlag: built without the race detector, the generated client's test
// is too (see race_test.go).
var raceFlag []string
