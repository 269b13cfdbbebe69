package report

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "": false, "false": false, "1": false, "TRUE": false} {
		env := map[string]string{"GITHUB_ACTIONS": v}
		if got := Enabled(func(k string) string { return env[k] }); got != want {
			t.Errorf("GITHUB_ACTIONS=%q: %v", v, got)
		}
	}
}

func TestWorkflowCommands(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(*strings.Builder)
		want  string
	}{
		{"group", func(b *strings.Builder) { Group(b, "Benchmark 50% (c8, c32)") }, "::group::Benchmark 50%25 (c8, c32)\n"},
		{"group newline", func(b *strings.Builder) { Group(b, "a\r\nb") }, "::group::a%0D%0Ab\n"},
		{"endgroup", func(b *strings.Builder) { EndGroup(b) }, "::endgroup::\n"},
		{"error", func(b *strings.Builder) { Error(b, "engine crash: decode-0, rank 0", "100% gone\nline two") },
			"::error title=engine crash%3A decode-0%2C rank 0::100%25 gone%0Aline two\n"},
		// A message cannot inject a command of its own, and "::" in it stays
		// data since the command ended at the first "::".
		{"injection", func(b *strings.Builder) { Error(b, "t", "x\n::add-mask::y\r\n::stop-commands::z") },
			"::error title=t::x%0A::add-mask::y%0D%0A::stop-commands::z\n"},
		{"title percent first", func(b *strings.Builder) { Error(b, "%3A", "%0A") }, "::error title=%253A::%250A\n"},
		{"no title", func(b *strings.Builder) { Error(b, "", "plain") }, "::error::plain\n"},
		{"notice", func(b *strings.Builder) { Notice(b, "run", "job 42, dir /x") }, "::notice title=run::job 42, dir /x\n"},
		{"warning", func(b *strings.Builder) { Warning(b, "a,b", "c") }, "::warning title=a%2Cb::c\n"},
	} {
		var b strings.Builder
		tc.write(&b)
		if b.String() != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, b.String(), tc.want)
		}
	}
}

// unescape reverses escapeData/escapeProperty as the runner does.
func unescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func TestEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "%", "%25", "a:b,c", "x\r\ny\n", "%0A literal", "100%%::,,"} {
		if got := unescape(escapeProperty(s)); got != s {
			t.Errorf("property %q → %q → %q", s, escapeProperty(s), got)
		}
		if e := escapeData(s); strings.ContainsAny(e, "\r\n") || unescape(e) != s {
			t.Errorf("data %q → %q", s, e)
		}
	}
}

func TestAnnotate(t *testing.T) {
	var b strings.Builder
	succeededRun(t).Annotate(&b)
	if b.Len() != 0 {
		t.Errorf("succeeded run annotated: %q", b.String())
	}
	failedRun(t).Annotate(&b)
	want := "::error title=mock-2p1d failed (died_after_healthy)::decode-0 exited with code 1 after the health gate%0A# not a heading%0Afirst error: torch.OutOfMemoryError"
	if !strings.HasPrefix(b.String(), want) || strings.Count(b.String(), "\n") != 1 || strings.Contains(b.String(), "\x1b") {
		t.Errorf("annotation %q\nwant prefix %q, one line, no escapes", b.String(), want)
	}
	b.Reset()
	Summary{Name: "x", Outcome: OutcomeInterrupted, ExitCode: 130}.Annotate(&b)
	if b.String() != "::error title=x interrupted::class unknown, exit code 130\n" {
		t.Errorf("bare annotation %q", b.String())
	}
}

// parseOutputFile reads a GITHUB_OUTPUT file the way the Actions runner
// does (FileCommandManager's key/value reader): lines split on any line
// break, empty lines skipped, "k=v" when "=" comes before any "<<",
// otherwise "k<<DELIM" and the lines up to a line equal to DELIM.
func parseOutputFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, hd := strings.Index(line, "="), strings.Index(line, "<<")
		switch {
		case eq >= 0 && (hd < 0 || eq < hd):
			if eq == 0 {
				return nil, fmt.Errorf("line %d: empty key", i+1)
			}
			out[line[:eq]] = line[eq+1:]
		case hd >= 0 && (eq < 0 || hd < eq):
			key, delim := line[:hd], line[hd+2:]
			if key == "" || delim == "" {
				return nil, fmt.Errorf("line %d: invalid heredoc", i+1)
			}
			var value []string
			for i++; ; i++ {
				if i == len(lines) {
					return nil, fmt.Errorf("matching delimiter not found for %q", delim)
				}
				if lines[i] == delim {
					break
				}
				value = append(value, lines[i])
			}
			out[key] = strings.Join(value, "\n")
		default:
			return nil, fmt.Errorf("line %d: invalid format %q", i+1, line)
		}
	}
	return out, nil
}

func TestAppendOutputsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "github_output")
	first := map[string]string{
		"job_id":    "4242",
		"empty":     "",
		"tricky":    "a=b<<c",
		"markdown":  "| a | b |\n|---|---|\n| 1 | 2 |",
		"trailing":  "ends with newline\n",
		"leading":   "\nstarts with newline",
		"blank":     "x\n\ny",
		"lookalike": "ghadelimiter_0000\nEOF\n",
		"unicode":   "✅ ±\nτ",
	}
	if err := AppendOutputs(path, first); err != nil {
		t.Fatal(err)
	}
	second := map[string]string{"outcome": "failed", "job_id": "4243"} // a later value wins
	if err := AppendOutputs(path, second); err != nil {
		t.Fatal(err)
	}
	got, err := parseOutputFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for k, v := range first {
		want[k] = v
	}
	for k, v := range second {
		want[k] = v
	}
	if len(got) != len(want) {
		t.Errorf("%d outputs, want %d: %q", len(got), len(want), got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	if !strings.HasPrefix(text, "blank<<ghadelimiter_") || !strings.Contains(text, "\nempty=\njob_id=4242\n") || !strings.HasSuffix(text, "job_id=4243\noutcome=failed\n") {
		t.Errorf("file is not sorted k=v / heredoc lines:\n%s", text)
	}
}

func TestAppendOutputsDelimiterCollision(t *testing.T) {
	defer func(f func() string) { newDelimiter = f }(newDelimiter)
	seq := []string{"ghadelimiter_A", "ghadelimiter_A", "ghadelimiter_B"}
	newDelimiter = func() string { d := seq[0]; seq = seq[1:]; return d }
	path := filepath.Join(t.TempDir(), "out")
	value := "line\nghadelimiter_A\nmore"
	if err := AppendOutputs(path, map[string]string{"v": value}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), "v<<ghadelimiter_B\n") {
		t.Errorf("delimiter contained in the value was used:\n%s", data)
	}
	if got, err := parseOutputFile(path); err != nil || got["v"] != value {
		t.Errorf("round trip %q, %v", got["v"], err)
	}

	newDelimiter = func() string { return "ghadelimiter_A" }
	if err := AppendOutputs(path, map[string]string{"w": value}); err == nil {
		t.Error("a value containing every delimiter was written")
	}
	if after, _ := os.ReadFile(path); string(after) != string(data) {
		t.Errorf("file changed on error:\n%s", after)
	}
}

func TestAppendOutputsRefusesKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	for _, key := range []string{"", "a=b", "a\nb", "a\rb", "a<<b"} {
		if err := AppendOutputs(path, map[string]string{"ok": "1", key: "v"}); err == nil {
			t.Errorf("key %q accepted", key)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("file written for refused keys: %v", err)
	}
	if err := AppendOutputs("", map[string]string{"a": "b"}); err == nil {
		t.Error("empty path accepted")
	}
}

// TestAppendOutputsConcurrent: each call is one O_APPEND write, so blocks
// from concurrent writers never interleave.
func TestAppendOutputsConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	var wg sync.WaitGroup
	errs := make(chan error, 8*40)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				k := fmt.Sprintf("w%d_%d", w, i)
				errs <- AppendOutputs(path, map[string]string{k: strings.Repeat(k+" line\n", 50)})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := parseOutputFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8*40 {
		t.Fatalf("%d outputs, want %d", len(got), 8*40)
	}
	for k, v := range got {
		if v != strings.Repeat(k+" line\n", 50) {
			t.Fatalf("%s mangled: %q", k, v)
		}
	}
}

func TestAppendSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "step_summary")
	if err := AppendSummary(path, "## one"); err != nil {
		t.Fatal(err)
	}
	if err := AppendSummary(path, "## two\n"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "## one\n## two\n" {
		t.Errorf("summary file %q", data)
	}

	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, make([]byte, MaxStepSummaryBytes-10), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := AppendSummary(big, strings.Repeat("x", 20)); err == nil {
		t.Error("summary past GitHub's limit accepted")
	}
	if fi, _ := os.Stat(big); fi.Size() != MaxStepSummaryBytes-10 {
		t.Errorf("file grew to %d", fi.Size())
	}
	if err := AppendSummary(big, "ok"); err != nil {
		t.Errorf("summary within the limit refused: %v", err)
	}
}
