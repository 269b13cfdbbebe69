package recipe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDuplicateKeys(t *testing.T) {
	same := edit(t, "  decode_workers: 1\n", "  decode_workers: 1\n  decode_workers: 1\n")
	r, err := parse(t, same)
	if err != nil || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "resources.decode_workers: set twice to the same value \"1\" (lines 12 and 13)") {
		t.Errorf("identical values: %v, warnings %q", err, r.Warnings)
	}
	diff := edit(t, "  decode_workers: 1\n", "  decode_workers: 1\n  decode_workers: 2\n")
	r, err = ParseWith("/recipes/r.yaml", []byte(diff), Options{AllowDuplicateKeys: true})
	if err != nil || *r.Resources.DecodeWorkers != 2 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "the last wins") {
		t.Errorf("allowed: %v, warnings %q", err, r.Warnings)
	}
	// Nested blocks and lists of mappings are checked too.
	nested := edit(t, "  type: sglang\n", "  type: sglang\n  sglang_config:\n    decode:\n      tp: 8\n      tp: 4\n")
	var de *DuplicateKeyError
	if _, err := parse(t, nested); !errors.As(err, &de) || de.Err.Field != "backend.sglang_config.decode.tp" || de.FirstValue != "8" || de.SecondValue != "4" {
		t.Errorf("nested: %v", err)
	}
}

func TestDocumentLimits(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	cases := []struct{ name, text, want string }{
		{"second document", base + "---\nname: other\ncolour: red\n", "a second YAML document"},
		{"alias bomb", base + bomb + "extra: *" + prev + "\n", "aliases expand to more than"},
		{"not a mapping", "- a\n", "must be a YAML mapping"},
		{"empty", "", "empty recipe"},
		{"comments only", "# nothing\n", "empty recipe"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.text)
			var re *Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want an *Error with %q", err, tc.want)
			}
		})
	}
	// The bomb alone (anchors defined, never expanded past the limit) is
	// refused before anything decodes it.
	if _, err := parse(t, bomb); err == nil || !strings.Contains(err.Error(), "aliases expand") {
		t.Errorf("bomb: %v", err)
	}
}

func TestReadInputBounded(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxInputBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadContext(context.Background(), big, Options{}); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Errorf("oversized file: %v", err)
	}
	if _, err := LoadContext(context.Background(), "/dev/zero", Options{}); err == nil || !strings.Contains(err.Error(), "larger than the 16 MiB limit") {
		t.Errorf("/dev/zero: %v", err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := LoadContext(ctx, fifo, Options{}); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("FIFO: err = %v, want the context's deadline", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a FIFO nobody writes to blocked past its context")
	}
	// A FIFO opened by a writer that never writes: the read is what blocks.
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	if _, err := LoadContext(ctx2, fifo, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent FIFO writer: err = %v", err)
	}
}

func TestTelemetry(t *testing.T) {
	block := func(s string) string { return edit(t, "benchmark:\n", "telemetry:\n"+s+"benchmark:\n") }
	ok := "  enabled: true\n  dcgm_exporter: {container_image: dcgm-exporter, port: 9401}\n"
	r := mustParse(t, block(ok))
	s, on := r.Telemetry.Settings()
	if !on || s.Provider != "dcgm-power" || s.Required || s.FrequencySeconds != 1 || s.StorageSubdir != "power" || s.JoinTimeoutSeconds != 12 || s.ExporterPort != 9401 {
		t.Errorf("settings %+v", s)
	}
	bad := []struct{ name, text, field string }{
		{"no exporter", "  enabled: true\n", "telemetry.dcgm_exporter"},
		{"exporter without port", "  enabled: false\n  dcgm_exporter: {container_image: x}\n", "telemetry.dcgm_exporter.port"},
		{"port range", "  enabled: true\n  dcgm_exporter: {container_image: x, port: 70000}\n", "telemetry.dcgm_exporter.port"},
		{"nan frequency", ok + "  default_frequency: .nan\n", "telemetry.default_frequency"},
		{"slow frequency", ok + "  default_frequency: 5\n", "telemetry.default_frequency"},
		{"join too short", ok + "  collector_join_timeout_seconds: 10\n", "telemetry.collector_join_timeout_seconds"},
		{"escaping subdir", ok + "  storage_subdir: ../x\n", "telemetry.storage_subdir"},
		{"unknown key", ok + "  colour: red\n", "telemetry.colour"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, block(tc.text))
			if err == nil || !strings.Contains(err.Error(), ": "+tc.field+": ") {
				t.Errorf("err = %v, want it to name %s", err, tc.field)
			}
		})
	}
	// The corpus's newer form: provider dcgm-power (which srtctl c88ef731
	// refuses, so it is planned with a warning) and a join budget of
	// exactly two cycles.
	newer, err := parse(t, block(ok+"  provider: dcgm-power\n  request_timeout_seconds: 2\n  collector_join_timeout_seconds: 10\n"))
	if err != nil || !strings.Contains(strings.Join(newer.Warnings, "\n"), "telemetry.provider") {
		t.Fatalf("provider dcgm-power: err %v", err)
	}
	if _, err := parse(t, block(ok+"  request_timeout_seconds: 2\n  collector_join_timeout_seconds: 10\n")); err == nil || !strings.Contains(err.Error(), "telemetry.collector_join_timeout_seconds") {
		t.Errorf("the old form keeps srtctl's strict join budget: %v", err)
	}
	if _, err := parse(t, block(ok+"  provider: prometheus\n")); err == nil || !strings.Contains(err.Error(), "telemetry.provider") {
		t.Errorf("provider prometheus: %v", err)
	}
	if s, on := mustParse(t, block(ok+"  required: true\n")).Telemetry.Settings(); !on || !s.Required {
		t.Errorf("required telemetry is planned now: %+v", s)
	}
}

// TestValidValuesAccepted: the forms the corpus and srtctl use pass the
// stricter checks.
func TestValidValuesAccepted(t *testing.T) {
	for _, v := range []string{"  req_rate: inf\n", "  req_rate: \"inf\"\n", "  req_rate: .inf\n", "  req_rate: 300\n", "  req_rate: 2.5\n", "  req_rate: 1e3\n",
		"  random_range_ratio: 1.0\n", "  random_range_ratio: 0.8\n"} {
		if _, err := parse(t, edit(t, "  osl: 1024\n", "  osl: 1024\n"+v)); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, m := range []string{"/a:/b", "/a:/b:ro", "/a/b-c_d.e:/x:rw"} {
		if _, err := parse(t, base+"extra_mount: [\""+m+"\"]\n"); err != nil {
			t.Errorf("mount %q: %v", m, err)
		}
	}
}
