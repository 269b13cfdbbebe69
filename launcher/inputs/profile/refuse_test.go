package profile

import (
	"context"
	"strings"
	"testing"
)

func TestPathsRefuseVariables(t *testing.T) {
	for _, p := range []string{"$HOME/runs", "/x/${USER}/runs", "/x/$SCRATCH", "${X"} {
		if _, err := resolvePath("/base", p, false); err == nil || !strings.Contains(err.Error(), "is not expanded") {
			t.Errorf("%q: err = %v", p, err)
		}
	}
	for _, p := range []string{"/x/runs", "rel/dir", "/a$/b", "/cost$5"} {
		if _, err := resolvePath("/base", p, false); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
}

func TestContainerRef(t *testing.T) {
	p := &Profile{Path: "/p.toml", Containers: map[string]string{"dynamo-sglang": "/sq/dynamo.sqsh"}}
	for name, want := range map[string]string{
		"dynamo-sglang":                "/sq/dynamo.sqsh",
		"lmsysorg/sglang:v0.5.12":      "lmsysorg/sglang:v0.5.12",
		"nginx:1.27.4":                 "nginx:1.27.4",
		"nvcr.io/nvidia/x@sha256:abcd": "nvcr.io/nvidia/x@sha256:abcd",
		"/images/a.sqsh":               "/images/a.sqsh",
		"registry.local:5000/team/img": "registry.local:5000/team/img",
	} {
		if got, err := p.ContainerRef(name); err != nil || got != want {
			t.Errorf("ContainerRef(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"dynamo-sglan", "nginx", "nginx-sqsh"} {
		if _, err := p.ContainerRef(name); err == nil || !strings.Contains(err.Error(), "is not a [containers] alias") || !strings.Contains(err.Error(), "dynamo-sglang") {
			t.Errorf("ContainerRef(%q): err = %v", name, err)
		}
	}
}

func TestLoadBounded(t *testing.T) {
	if _, err := LoadContext(context.Background(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Errorf("/dev/zero: %v", err)
	}
}
