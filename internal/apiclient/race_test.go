//go:build race && !apiclient

package apiclient_test

// raceFlag is passed on to the go test of the generated client, so that it
// builds on the packages this test binary was built from (the build cache)
// instead of building them all again without the race detector.
var raceFlag = []string{"-race"}
