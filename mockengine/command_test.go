package mockengine

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestRunCommand: each text option the command parses is refused with exit
// 2 naming its flag, and a fault's exit code is the command's, with no
// message after the fault's own lines (0 is success).
func TestRunCommand(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "fail.log")
	if err := os.WriteFile(logFile, []byte("from the file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func(edit func(*CommandOptions)) CommandOptions {
		o := CommandOptions{Listen: "127.0.0.1:0", Mode: string(ModeStandalone), FailBeforeHealthyAfter: "1ms", FailExitCode: 3}
		edit(&o)
		return o
	}
	for _, tt := range []struct {
		name string
		o    CommandOptions
		code exitcode.Code
		want string // in the error, or in the log when the code is a fault's
	}{
		{"bad mode", base(func(o *CommandOptions) { o.Mode = "router" }), exitcode.Config, `--mode: unknown mode "router"`},
		{"bad delay", base(func(o *CommandOptions) { o.FailBeforeHealthyAfter = "soon" }), exitcode.Config, "--fail-before-healthy-after: "},
		{"no log file", base(func(o *CommandOptions) { o.FailLogFile = filepath.Join(t.TempDir(), "nope") }), exitcode.Config, "--fail-log-file: "},
		{"no answer key", base(func(o *CommandOptions) { o.AnswerKeyFile = filepath.Join(t.TempDir(), "nope") }), exitcode.Config, "--answer-key: "},
		{"bad options", base(func(o *CommandOptions) { o.FailExitCode = 256 }), exitcode.Config, "mock engine options: exit code 256 is outside 0..255"},
		{"fault exits 3", base(func(o *CommandOptions) { o.FailLogLines, o.FailLogFile = []string{"from the flag"}, logFile }), 3, "from the flag\nfrom the file\n"},
		{"fault exits 0", base(func(o *CommandOptions) { o.FailExitCode = 0 }), 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log strings.Builder
			tt.o.Log = &log
			err := RunCommand(t.Context(), tt.o)
			if exitcode.Of(err) != tt.code {
				t.Fatalf("exit %d (%v), want %d", exitcode.Of(err), err, tt.code)
			}
			if tt.code == exitcode.Config {
				if !strings.Contains(err.Error(), tt.want) {
					t.Errorf("%v, want it to hold %q", err, tt.want)
				}
				return
			}
			if err != nil && err.Error() != "" {
				t.Errorf("a fault's exit has a message: %q", err)
			}
			if !strings.Contains(log.String(), tt.want) {
				t.Errorf("log %q, want it to hold %q", log.String(), tt.want)
			}
		})
	}
}

func TestServeDCGMRefusals(t *testing.T) {
	for _, tt := range []struct {
		name string
		o    DCGMCommandOptions
		want string
	}{
		{"an argument", DCGMCommandOptions{Args: []string{"x"}, GPUList: "0"}, "takes no arguments"},
		{"not an index", DCGMCommandOptions{GPUList: "0,a"}, `--gpus: "a" is not a GPU index`},
		{"a negative index", DCGMCommandOptions{GPUList: "-1"}, `--gpus: "-1" is not a GPU index`},
		{"negative watts", DCGMCommandOptions{GPUList: "0", DCGMOptions: DCGMOptions{Watts: -1}}, "--watts must not be negative"},
	} {
		err := ServeDCGM(t.Context(), tt.o)
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v (exit %d), want exit 2 with %q", tt.name, err, exitcode.Of(err), tt.want)
		}
	}
}

// TestServeDCGM serves until its context ends, and says where.
func TestServeDCGM(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeDCGM(ctx, DCGMCommandOptions{Listen: "127.0.0.1:0", GPUList: "0, 3", Stdout: w,
			DCGMOptions: DCGMOptions{Watts: 250, Hostname: "n1"}})
	}()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "mock-dcgm-exporter: 2 GPUs at 250.0 W on ")
	if !ok {
		t.Fatalf("first line %q", line)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `gpu="3"`) || !strings.Contains(string(body), "GPU-n1-0") {
		t.Errorf("metrics:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("after its context ended: %v", err)
	}
}
