package runners

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// TestClusterLane: Cluster.Lane decides a launch as InferenceX's launcher
// does — the lane's refusal first (a *srtlanes.RefusedError), then the
// record that contradicts the lane (a *LaneError) — and returns the
// launch with either.
func TestClusterLane(t *testing.T) {
	wheels := map[string]string{"dynamo-wheels": "/w"}
	multi := func(prefix, fw string) srtlanes.Request {
		return srtlanes.Request{ModelPrefix: prefix, Precision: "fp4", Framework: fw, MultiNode: true}
	}
	for _, tc := range []struct {
		name, id string
		vols     map[string]string
		srt      string
		r        srtlanes.Request
		kind     string // "", "refused", "contradicted"
		msg      string
		path     srtlanes.Path
		script   string
	}{
		{"gb200-nv dynamo-sglang runs, torchao", "gb200-nv", wheels, "shared-run-root: /runs", multi("dsr1", "dynamo-sglang"), "", "", srtlanes.SrtMulti, "install-torchao.sh"},
		{"gb200-nv refuses sglang", "gb200-nv", wheels, "shared-run-root: /runs", multi("dsr1", "sglang"), "refused",
			"Unsupported framework: sglang. Supported frameworks are: dynamo-sglang, dynamo-trt, dynamo-vllm", srtlanes.SrtMulti, ""},
		{"the refusal comes before the record's check", "gb200-nv", nil, "", multi("dsr1", "sglang"), "refused", "Unsupported framework", srtlanes.SrtMulti, ""},
		{"gb200-nv without the wheels volume", "gb200-nv", nil, "shared-run-root: /runs", multi("dsr1", "dynamo-sglang"), "contradicted",
			`no volume "dynamo-wheels"`, srtlanes.SrtMulti, "install-torchao.sh"},
		{"b200-nscale dsv4 trt: the reject", "b200-nscale", nil, "", multi("dsv4", "dynamo-trt"), "refused", "multinode dsv4 supports only dynamo-vllm", srtlanes.SrtMulti, ""},
		{"b200-nscale dsv4 vllm: the native lane", "b200-nscale", nil, "", multi("dsv4", "dynamo-vllm"), "", "", srtlanes.SrtNative, ""},
		{"single-node: no lane to refuse", "gb200-nv", nil, "", srtlanes.Request{Framework: "sglang"}, "", "", srtlanes.SrtSingle, ""},
		{"a cluster outside the table", "mine", nil, "", multi("dsr1", "sglang"), "", "", srtlanes.SrtMulti, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := Parse("runners.yaml", []byte(record(tc.id, tc.vols, tc.srt)), Options{Home: "/home/r"})
			if err != nil {
				t.Fatal(err)
			}
			l, err := inv.Clusters[tc.id].Lane(tc.r)
			var refused *srtlanes.RefusedError
			var contradicted *LaneError
			kind := ""
			switch {
			case errors.As(err, &contradicted):
				kind = "contradicted"
			case errors.As(err, &refused):
				kind = "refused"
			case err != nil:
				kind = "other: " + err.Error()
			}
			if kind != tc.kind || (err != nil && !strings.Contains(err.Error(), tc.msg)) {
				t.Errorf("Lane error %v (%s), want %s naming %q", err, kind, tc.kind, tc.msg)
			}
			if l.Path != tc.path || l.Cluster != tc.id || l.SetupScript() != tc.script {
				t.Errorf("launch %s on %s, setup %q; want %s on %s, setup %q", l.Path, l.Cluster, l.SetupScript(), tc.path, tc.id, tc.script)
			}
		})
	}
}
