package shellwords

import (
	"reflect"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	cases := []struct {
		cmd  string
		want []string
		err  string // substring of the refusal
	}{
		{cmd: "bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh", want: []string{"bash", "/infmax-workspace/benchmarks/multi_node/agentic_srt.sh"}},
		{cmd: "  python3 -u run.py --name 'a b' --x=\"c d\" e\\ f  ", want: []string{"python3", "-u", "run.py", "--name", "a b", "--x=c d", "e f"}},
		{cmd: `echo "say \"hi\"" 'it''s'`, want: []string{"echo", `say "hi"`, "its"}},
		{cmd: "run.sh --empty ''", want: []string{"run.sh", "--empty", ""}},
		{cmd: "a.sh | tee log", err: "shell construct"},
		{cmd: "a.sh && b.sh", err: "shell construct"},
		{cmd: "a.sh; b.sh", err: "2 commands"},
		{cmd: "a.sh > out.log", err: "redirects (>)"},
		{cmd: "a.sh &", err: "&"},
		{cmd: "FOO=1 a.sh", err: "sets FOO="},
		{cmd: "a.sh $HOME", err: `word "$HOME"`},
		{cmd: `a.sh "$(date)"`, err: "needs a shell"},
		{cmd: "a.sh *.json", err: "needs a shell"},
		{cmd: "a.sh ~/x", err: "needs a shell"},
		{cmd: "if true; then a.sh; fi", err: "shell construct"},
		{cmd: "a.sh 'unterminated", err: "not a shell command"},
		{cmd: "   ", err: "0 commands"},
	}
	for _, tc := range cases {
		got, err := Split(tc.cmd)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Split(%q) = %q, %v; want an error with %q", tc.cmd, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tc.cmd, got, err, tc.want)
		}
	}
}
