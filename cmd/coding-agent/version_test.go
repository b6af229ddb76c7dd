package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionStamp(t *testing.T) {
	if got := stampedVersion("v1.4.2"); got != "1.4.2" {
		t.Errorf("stamped v1.4.2: %q", got)
	}
	for _, tt := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}}, "0.3.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, devVersion},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, devVersion + "+0123456789ab-dirty"},
	} {
		if got := versionFromBuildInfo(&tt.bi); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.bi.Main, got, tt.want)
		}
	}
}
