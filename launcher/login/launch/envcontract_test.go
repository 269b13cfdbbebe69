package launch

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// The scripts InferenceX's jobs run, per tree: the benchmark scripts and
// the library they source, the recipes' setup scripts (run in every worker
// container), and the Python steps that read the matrix point's settings
// (process_result, the power aggregators, inject_synthetic_acceptance).
// runners/launch_*.sh and slurm_utils.sh are not among them: they run on
// the GitHub runner and are what slurmbench replaces.
func jobScripts(t *testing.T, tree string) []string {
	t.Helper()
	root := shareddata.Path(t, "data", tree)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasPrefix(rel, "benchmarks/") && (strings.HasSuffix(rel, ".sh") || strings.HasSuffix(rel, ".py")),
			strings.HasPrefix(rel, "utils/") && strings.HasSuffix(rel, ".py"),
			rel == "runners/inject_synthetic_acceptance.py":
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", root, err)
	}
	if len(out) == 0 {
		shareddata.Missing(t, "no InferenceX job scripts under %s", root)
	}
	return out
}

var (
	shRef      = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	shAssign   = regexp.MustCompile(`(?m)(?:^|[\s;&|({]|\bexport\s+|\blocal\s+|\bdeclare\s+(?:-\w+\s+)*|\breadonly\s+)([A-Za-z_][A-Za-z0-9_]*)(?:\+?=|\[[^]]*\]=)`)
	shLoop     = regexp.MustCompile(`\b(?:for|read(?:\s+-\w+)*)\s+([A-Za-z_][A-Za-z0-9_]*)`)
	pyEnv      = regexp.MustCompile(`(?:environ\.get\(|environ\[|getenv\(|environ\.setdefault\()\s*["']([A-Za-z_][A-Za-z0-9_]*)["']`)
	envNameRef = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	pyDef      = regexp.MustCompile(`^(\w+)\(\s*(\w+)`)
)

// scriptEnvReads returns the environment variables a script reads: for a
// shell script, every upper-case name whose first mention is a read (a
// name the script assigns before reading is its own); for Python, every
// os.environ / os.getenv key.
func scriptEnvReads(src string, python bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(n string) {
		if envNameRef.MatchString(n) && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if python {
		for _, m := range pyEnv.FindAllStringSubmatch(src, -1) {
			add(m[1])
		}
		// Helpers taking the variable's name (process_result's
		// get_optional_component_metadata, inject_synthetic_acceptance's
		// _enabled): a def whose body reads os.environ with its parameter.
		for _, chunk := range strings.Split(src, "\ndef ")[1:] {
			h := pyDef.FindStringSubmatch(chunk)
			if h == nil || !regexp.MustCompile(`environ(?:\.get\(|\[)\s*`+regexp.QuoteMeta(h[2])+`\b`).MatchString(chunk) {
				continue
			}
			call := regexp.MustCompile(`\b` + regexp.QuoteMeta(h[1]) + `\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']`)
			for _, m := range call.FindAllStringSubmatch(src, -1) {
				add(m[1])
			}
		}
		return out
	}
	first := map[string]int{} // first assignment offset
	for _, re := range []*regexp.Regexp{shAssign, shLoop} {
		for _, m := range re.FindAllStringSubmatchIndex(src, -1) {
			// An assignment takes effect at the end of its line: in
			// X=${X:-default} the right side still reads the environment.
			n, at := src[m[2]:m[3]], len(src)
			if i := strings.IndexByte(src[m[3]:], '\n'); re == shLoop {
				at = m[3] // a loop or read sets it at once
			} else if i >= 0 {
				at = m[3] + i
			}
			if o, ok := first[n]; !ok || at < o {
				first[n] = at
			}
		}
	}
	for _, m := range shRef.FindAllStringSubmatchIndex(stripShComments(src), -1) {
		n := src[m[2]:m[3]]
		if o, ok := first[n]; ok && o < m[0] {
			continue
		}
		add(n)
	}
	return out
}

// stripShComments blanks comments (keeping offsets) so a name in a comment
// is not taken for a read.
func stripShComments(src string) string {
	b := []byte(src)
	lineStart := true
	inSingle := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n':
			lineStart, inSingle = true, false
			continue
		case c == '\'' && !inSingle:
			inSingle = true
		case c == '\'' && inSingle:
			inSingle = false
		case c == '#' && !inSingle && (lineStart || i > 0 && (b[i-1] == ' ' || b[i-1] == '\t')):
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
			i--
			continue
		}
		if c != ' ' && c != '\t' {
			lineStart = false
		}
	}
	return string(b)
}

func TestEnvContractCoversInferenceXScripts(t *testing.T) {
	reads := map[string][]string{}
	for _, tree := range []string{"inferencex", "inferencex-v2"} {
		for _, p := range jobScripts(t, tree) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range scriptEnvReads(string(b), strings.HasSuffix(p, ".py")) {
				rel, _ := filepath.Rel(shareddata.Path(t, "data"), p)
				reads[n] = append(reads[n], rel)
			}
		}
	}
	var names []string
	for n := range reads {
		names = append(names, n)
	}
	sort.Strings(names)
	passed := map[string]bool{}
	for _, n := range workflowVars {
		passed[n] = true
	}
	for _, n := range names {
		switch {
		case passed[n], hasAnyPrefix(n, workflowPrefixes), jobProvidedVars[n] != "", withheldVars[n] != "":
		default:
			t.Errorf("%s is read by %s but is neither passed to the job (workflowVars, workflowPrefixes), provided by the job (jobProvidedVars) nor withheld with a reason (withheldVars)", n, strings.Join(reads[n], ", "))
		}
	}
	// The names issue #24 found by reading the scripts by hand: the
	// extraction must find them, or it is not reading what the jobs read.
	for _, n := range []string{"PREFILL_PP_SIZE", "DECODE_DCP_SIZE", "RECIPE_FINGERPRINT", "TOTAL_CPU_DRAM_GB",
		"ROUTER_METADATA", "KV_P2P_TRANSFER", "IS_MULTINODE", "EVAL_ONLY", "SYNTHETIC_ACCEPTANCE", "NUM_SPEC_TOKENS", "THINKING_MODE"} {
		if reads[n] == nil {
			t.Errorf("the scan found no read of %s: the extraction misses a form the scripts use", n)
		}
	}
	t.Logf("%d variables read by the scripts", len(names))
}

func TestEnvContractListsAreConsistent(t *testing.T) {
	seen := map[string]string{}
	check := func(list, n, reason string) {
		if !envNameRef.MatchString(n) {
			t.Errorf("%s: %q is not an environment variable name", list, n)
		}
		if prev, ok := seen[n]; ok {
			t.Errorf("%s is in both %s and %s", n, prev, list)
		}
		seen[n] = list
		if reason == "" {
			t.Errorf("%s: %s has no reason", list, n)
		}
	}
	for _, n := range workflowVars {
		check("workflowVars", n, "passed")
	}
	for n, r := range jobProvidedVars {
		check("jobProvidedVars", n, r)
	}
	for n, r := range withheldVars {
		check("withheldVars", n, r)
		if hasAnyPrefix(n, workflowPrefixes) {
			t.Errorf("withheld %s matches a passed prefix", n)
		}
	}
}

// The scanner itself: each form a script reads the environment with, and
// the forms that are not reads.
func TestScriptEnvReads(t *testing.T) {
	for _, c := range []struct {
		name, src string
		python    bool
		want      []string
	}{
		{"plain and braced", "echo $A ${B:-x} \"${C}\"", false, []string{"A", "B", "C"}},
		{"assigned first is the script's own", "D=1\necho $D", false, nil},
		{"read before assigned is an input", "E=${E:-3}\necho $E", false, []string{"E"}},
		{"exported and local", "export F=1; local G=2\necho $F $G", false, nil},
		{"loop variable", "for H in a b; do echo $H; done", false, nil},
		{"comment", "# uses $I\necho ok", false, nil},
		{"single-quoted hash is no comment", "echo '#' $J", false, []string{"J"}},
		{"lower case is local", "echo $k", false, nil},
		{"python get and index", "os.environ.get('L', '1')\nos.environ[\"M\"]\nos.getenv('N')", true, []string{"L", "M", "N"}},
		{"python helper", "x=1\ndef flag(name):\n    return os.environ.get(name, '')\nflag('O')\n", true, []string{"O"}},
	} {
		got := scriptEnvReads(c.src, c.python)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: %q gives %v, want %v", c.name, c.src, got, c.want)
		}
	}
}

func TestJobEnvPassesNamesAndPrefixes(t *testing.T) {
	t.Setenv("PREFILL_PP_SIZE", "2")
	t.Setenv("AIPERF_DRAIN_TIMEOUT_SECONDS", "30")
	t.Setenv("MYLAB_KNOB", "on")
	t.Setenv("MODAL_TOKEN_SECRET", "s3cret")
	t.Setenv("OTHER_THING", "x")
	pl := &plan.Plan{EnvPassthroughPrefixes: []string{"MYLAB_"}}
	got := strings.Join(JobEnv(pl), "\n") + "\n"
	for _, want := range []string{"PREFILL_PP_SIZE=2\n", "AIPERF_DRAIN_TIMEOUT_SECONDS=30\n", "MYLAB_KNOB=on\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("job env lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"MODAL_TOKEN_SECRET", "OTHER_THING"} {
		if strings.Contains(got, absent+"=") {
			t.Errorf("job env passes %s:\n%s", absent, got)
		}
	}
	// A secret named in env.passthrough does pass.
	pl.EnvPassthrough = []string{"MODAL_TOKEN_SECRET"}
	if got := strings.Join(JobEnv(pl), "\n"); !strings.Contains(got, "MODAL_TOKEN_SECRET=s3cret") {
		t.Errorf("env.passthrough did not pass the named secret:\n%s", got)
	}
}
