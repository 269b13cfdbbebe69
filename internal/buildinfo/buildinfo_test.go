package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestString(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: v}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "4880e87a1b2c3d4e5f60718293a4b5c6d7e8f901"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	for _, tt := range []struct {
		version, commit string
		info            func() (*debug.BuildInfo, bool)
		want            string
	}{
		{"v1.2.0", "abc1234", info("v9.9.9", rev), "v1.2.0 (abc1234)"}, // the Makefile's stamp wins
		{"dev", "unknown", info("v1.3.0"), "v1.3.0"},                   // go install ...@v1.3.0
		{"8b4dcb6", "8b4dcb6", none, "8b4dcb6"},                        // git describe of an untagged commit: said once
		{"8b4dcb6-dirty", "8b4dcb6", none, "8b4dcb6-dirty"},
		{"dev", "unknown", info("(devel)", rev), "dev (4880e87a1b2c)"},
		{"dev", "unknown", info("(devel)", rev, dirty), "dev (4880e87a1b2c-dirty)"},
		{"dev", "unknown", info("(devel)", debug.BuildSetting{Key: "vcs.revision", Value: "abc"}), "dev (abc)"}, // a short revision is kept whole
		{"dev", "unknown", none, "dev"},
	} {
		if got := String(tt.version, tt.commit, tt.info); got != tt.want {
			t.Errorf("String(%q, %q) = %q, want %q", tt.version, tt.commit, got, tt.want)
		}
	}
}

func TestResolve(t *testing.T) {
	info := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}}}, true
	}
	if v, c := Resolve("dev", "unknown", info); v != "v1.3.0" || c != "0123456789ab" {
		t.Errorf("unstamped: %q %q", v, c)
	}
	if v, c := Resolve("v2.0.0", "feedbee", info); v != "v2.0.0" || c != "feedbee" {
		t.Errorf("stamped: %q %q, want the stamp", v, c)
	}
}
