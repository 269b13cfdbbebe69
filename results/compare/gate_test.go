package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseRules(t *testing.T) {
	rules, err := ParseRules("tput_per_gpu<-2%, median_ttft>+10%,median_tpot > 5 %")
	if err != nil {
		t.Fatal(err)
	}
	want := []Rule{
		{Metric: "tput_per_gpu", Above: false, Pct: -2, Text: "tput_per_gpu<-2%"},
		{Metric: "median_ttft_ms", Above: true, Pct: 10, Text: "median_ttft>+10%"},
		{Metric: "median_tpot_ms", Above: true, Pct: 5, Text: "median_tpot > 5 %"},
	}
	for i, r := range rules {
		if r != want[i] {
			t.Errorf("rule %d = %+v, want %+v", i, r, want[i])
		}
	}
	for _, bad := range []string{"", "tput_per_gpu", "tput_per_gpu<-2", "tput<-2%", "median_tpot=+5%", "tput_per_gpu<-2%,"} {
		if _, err := ParseRules(bad); err == nil {
			t.Errorf("ParseRules(%q) accepted", bad)
		}
	}
}

// TestGate uses the compare fixtures: ctx16/gen8 c2048's median TPOT rose
// 17.6 %, c1024 is marked invalid in the candidate, c4096 exists only in
// the candidate and gpus8 c64 only in the baseline.
func TestGate(t *testing.T) {
	base, cand := loadCompareSets(t)
	status := func(g *GateResult) map[string]string {
		m := map[string]string{}
		for _, r := range g.Rows {
			m[r.Point] = r.Status
		}
		return m
	}
	for _, tc := range []struct {
		name         string
		rules        string
		allowMissing bool
		pass         bool
		want         map[string]string
	}{
		{"TPOT regression beyond the threshold", "median_tpot>+5%", true, false,
			map[string]string{"ctx16/gen8 c2048": GateFail, "ctx16/gen8 c1024": GateInvalid, "ctx16/gen8 c4096": GateMissing, "gpus8 c64": GateMissing, "gsm8k": GatePass}},
		{"threshold above the regression", "median_tpot>+20%", true, true,
			map[string]string{"ctx16/gen8 c2048": GatePass, "ctx16/gen8 c1024": GateInvalid}},
		{"missing and invalid points fail by default", "median_tpot>+20%", false, false,
			map[string]string{"ctx16/gen8 c2048": GatePass, "ctx16/gen8 c1024": GateFail, "ctx16/gen8 c4096": GateFail, "gpus8 c64": GateFail}},
		{"throughput rule", "tput_per_gpu<-2%", true, true, map[string]string{"ctx16/gen8 c2048": GatePass}},
		{"gsm8k rule", "gsm8k_strict_match<-0.1%", true, false, map[string]string{"gsm8k": GateFail}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := ParseRules(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			g := Gate(base, cand, GateOptions{Rules: rules, AllowMissing: tc.allowMissing})
			if g.Pass != tc.pass || (g.Err() == nil) != tc.pass {
				t.Errorf("pass %v (%v), want %v", g.Pass, g.Err(), tc.pass)
			}
			got := status(g)
			for point, want := range tc.want {
				if got[point] != want {
					t.Errorf("%s: %s, want %s", point, got[point], want)
				}
			}
		})
	}

	rules, _ := ParseRules("tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%")
	g := Gate(base, cand, GateOptions{Rules: rules})
	err := g.Err()
	if err == nil || !strings.Contains(err.Error(), "ctx16/gen8 c2048 (median_tpot +17.6% (rule median_tpot>+5%))") ||
		!strings.Contains(err.Error(), "ctx16/gen8 c4096 (missing in the baseline)") {
		t.Errorf("error %v does not name the failing rows", err)
	}
	var md, js bytes.Buffer
	if err := g.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| ctx16/gen8 c2048 | 8534.8 → 8783.7 ▲2.9 % |") || !strings.Contains(md.String(), "60718.00 → 55498.00 ▼8.6 %") ||
		!strings.Contains(md.String(), "21.72 → 25.55 ▲17.6 % ✗") {
		t.Errorf("Markdown rows:\n%s", md.String())
	}
	if bytes.ContainsRune(js.Bytes(), '−') {
		t.Errorf("JSON has a typographic minus:\n%s", js.String())
	}
	var decoded GateResult
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || decoded.Pass || len(decoded.Rows) != len(g.Rows) {
		t.Errorf("JSON does not decode to the gate: %v", err)
	}
	golden(t, "gate.golden.md", md.Bytes())
	golden(t, "gate.golden.json", js.Bytes())
}
