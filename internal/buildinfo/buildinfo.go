// Package buildinfo says which quire is running: the module version, the
// commit and the Go version, as the Go toolchain recorded them in the
// binary (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Info is what the binary knows of its own build.
type Info struct {
	Version   string // v1.2.3 from go install quire@v1.2.3; "(devel)" for a build in the source tree
	Revision  string // the VCS commit, with "-dirty" when the tree had changes; "unknown" without one
	GoVersion string // go1.26.0
}

// Read returns the build information of the running binary. A test binary
// and a build without VCS information still get every field.
func Read() Info {
	info := Info{Version: "(devel)", Revision: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if v := bi.Main.Version; v != "" {
		info.Version = v
	}
	if bi.GoVersion != "" {
		info.GoVersion = bi.GoVersion
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && info.Revision != "unknown" {
		info.Revision += "-dirty"
	}
	return info
}

// String is the line quire version prints.
func (i Info) String() string {
	return "quire " + i.Version + " (commit " + i.Revision + ", " + i.GoVersion + ")"
}
