package main

import (
	"runtime/debug"
	"strings"
)

// devVersion is the version of a build that knows no better.
const devVersion = "0.1.0-dev"

// stampedVersion returns the release version stamped at link time (without
// a leading "v"), else the module version from the build info, else the
// development version with the VCS revision when the build recorded one.
func stampedVersion(stamped string) string {
	if v := strings.TrimPrefix(strings.TrimSpace(stamped), "v"); v != "" {
		return v
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return devVersion
	}
	return versionFromBuildInfo(bi)
}

func versionFromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return devVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified == "true" {
		rev += "-dirty"
	}
	return devVersion + "+" + rev
}
