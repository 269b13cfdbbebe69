package results

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestCollectCustom(t *testing.T) {
	const name = "dsv4_agentic"
	good := `{"num_requests_successful": 812, "request_throughput": 0.23, "note": "x", "submission_valid": true}`
	cases := []struct {
		name     string
		files    map[string]string // relative to a temp dir: ws/ (output) or agentic/ (result dir)
		concs    []int
		found    []int // concurrencies of the results, in order
		files0   int
		concDirs []int
		missing  []int
		invalid  int
		none     bool
	}{
		{name: "two points in the workspace",
			files: map[string]string{"ws/" + name + "_conc4.json": good, "ws/" + name + "_conc16.json": good,
				"agentic/conc_4/aiperf_artifacts/profile_export.json": "{}", "agentic/conc_16/benchmark.log": "log\n",
				"ws/other_conc4.json": good, "ws/" + name + "_conc4.json.tmp": good},
			concs: []int{4, 16}, found: []int{4, 16}, files0: 2, concDirs: []int{4, 16}},
		{name: "one of two missing",
			files: map[string]string{"ws/" + name + "_conc4.json": good},
			concs: []int{4, 16}, found: []int{4}, missing: []int{16}},
		{name: "zero successful requests is invalid",
			files: map[string]string{"ws/" + name + "_conc8.json": `{"num_requests_successful": 0}`},
			concs: []int{8}, found: []int{8}, invalid: 1},
		{name: "not JSON is invalid",
			files: map[string]string{"agentic/" + name + "_conc8.json": `oops`},
			found: []int{8}, invalid: 1, files0: 1},
		{name: "nothing at all", none: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, c := range tc.files {
				writeTestFile(t, filepath.Join(dir, p), c)
			}
			out, err := CollectCustom(CustomCollectOptions{ResultDir: filepath.Join(dir, "agentic"),
				OutputDirs: []string{filepath.Join(dir, "ws")}, ResultFilename: name, Concurrencies: tc.concs})
			if out == nil {
				t.Fatalf("no output: %v", err)
			}
			var got []int
			for _, r := range out.Results {
				got = append(got, r.Concurrency)
			}
			if !reflect.DeepEqual(got, tc.found) {
				t.Errorf("results for %v, want %v", got, tc.found)
			}
			if out.Files != tc.files0 || !reflect.DeepEqual(out.ConcDirs, tc.concDirs) {
				t.Errorf("files %d, conc dirs %v; want %d, %v", out.Files, out.ConcDirs, tc.files0, tc.concDirs)
			}
			var ie *CustomIncompleteError
			wantErr := tc.none || len(tc.missing) > 0 || tc.invalid > 0
			if wantErr != errors.As(err, &ie) {
				t.Fatalf("err = %v, want an incomplete error: %v", err, wantErr)
			}
			if ie != nil && (ie.None != tc.none || !reflect.DeepEqual(ie.Missing, tc.missing) || len(ie.Invalid) != tc.invalid) {
				t.Errorf("incomplete: none %v missing %v invalid %d; want %v %v %d (%v)", ie.None, ie.Missing, len(ie.Invalid), tc.none, tc.missing, tc.invalid, err)
			}
		})
	}
}

func TestCollectCustomMetrics(t *testing.T) {
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "r_conc2.json"), `{"num_requests_successful": 40, "output_token_throughput": 123.5, "ok": true, "name": "x"}`)
	out, err := CollectCustom(CustomCollectOptions{OutputDirs: []string{dir}, ResultFilename: "r", Concurrencies: []int{2}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"num_requests_successful": 40, "output_token_throughput": 123.5, "ok": 1}
	if r := out.Results[0]; !reflect.DeepEqual(r.Metrics, want) || !r.Valid {
		t.Errorf("metrics %v valid %v, want %v valid", r.Metrics, r.Valid, want)
	}
}

func TestStageCustom(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	writeTestFile(t, filepath.Join(ws, "r_conc2.json"), `{"num_requests_successful": 1}`)
	out, err := CollectCustom(CustomCollectOptions{OutputDirs: []string{ws}, ResultFilename: "r"})
	if err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(dir, "stage")
	// The workspace staged into itself is left alone; another directory
	// gets a copy under the same name.
	staged, err := StageCustom(out, false, ws, stage)
	if err != nil {
		t.Fatal(err)
	}
	if len(staged) != 2 || staged[1].Dest != filepath.Join(stage, "r_conc2.json") {
		t.Fatalf("staged %+v", staged)
	}
	if b, err := os.ReadFile(filepath.Join(stage, "r_conc2.json")); err != nil || string(b) != `{"num_requests_successful": 1}` {
		t.Errorf("staged copy %q, %v", b, err)
	}
	// A different file already there is not overwritten without asking.
	writeTestFile(t, filepath.Join(ws, "r_conc2.json"), `{"num_requests_successful": 2}`)
	if _, err := StageCustom(out, false, stage); err == nil {
		t.Error("a different staged file was overwritten")
	}
	if _, err := StageCustom(out, true, stage); err != nil {
		t.Errorf("overwrite: %v", err)
	}
}

// TestResultReadsAreBounded: a result file past MaxResultBytes — a custom
// benchmark's (audit #33 row 11: 1 GiB allocated for a 1 GiB file), an
// SA-Bench point's or an lm-eval score's — is refused after reading at
// most the limit, and the error names it.
func TestResultReadsAreBounded(t *testing.T) {
	dir := t.TempDir()
	big := func(name string) string {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Sparse: no disk used, but a whole-file read would allocate it.
		if err := f.Truncate(MaxResultBytes + 1); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const want = "larger than the 16 MiB limit"
	for _, tt := range []struct {
		name string
		read func() error
	}{
		{"custom result", func() error {
			big("r_conc4.json")
			out, _ := CollectCustom(CustomCollectOptions{OutputDirs: []string{dir}, ResultFilename: "r", Concurrencies: []int{4}})
			if out == nil || len(out.Results) != 1 {
				return errors.New("no result collected")
			}
			return errors.New(out.Results[0].Note)
		}},
		{"SA-Bench result", func() error { _, err := ReadSABench(big("sa.json")); return err }},
		{"lm-eval result", func() error { _, err := ReadGSM8K(big("results.json")); return err }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.read(); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}
