package dynamoinstall_test

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/job/dynamoinstall"
	"github.com/slurmbench/slurmbench/launcher/job/dynamoinstall/dynamoinstalltest"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestRunCommand: every flag refusal exits 2 before Python is asked; a
// failed fetch exits 7, or with the signal's code when ctx had ended; a
// success says what it did.
func TestRunCommand(t *testing.T) {
	fakes := dynamoinstalltest.New(t)
	fakes.Setenv(t, t.TempDir(), dynamoinstalltest.EnvFail+"=download")
	cache := filepath.Join(t.TempDir(), "wheels")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		d    plan.Dynamo
		tmp  string
		code exitcode.Code
		want string
	}{
		{"git without hash", nil, plan.Dynamo{Cache: cache, Version: "1.0", Git: "https://example.com/d.git"}, "", exitcode.Config, "--git builds from source: it needs --hash"},
		{"no source", nil, plan.Dynamo{Cache: cache}, "", exitcode.Config, "exactly one of --version, --wheel, --hash and --top-of-tree"},
		{"two sources", nil, plan.Dynamo{Cache: cache, Version: "1.0", Wheel: "1.0"}, "", exitcode.Config, "exactly one"},
		{"no cache", nil, plan.Dynamo{Version: "1.0"}, "", exitcode.Config, "--cache: required"},
		{"relative cache", nil, plan.Dynamo{Cache: "wheels", Version: "1.0"}, "", exitcode.Config, `--cache "wheels": not an absolute path`},
		{"relative tmp", nil, plan.Dynamo{Cache: cache, Version: "1.0"}, "tmp", exitcode.Config, `--tmp "tmp": not an absolute path`},
		{"bad version", nil, plan.Dynamo{Cache: cache, Version: "../../etc"}, "", exitcode.Config, "not a version"},
		{"fetch fails", nil, plan.Dynamo{Cache: cache, Version: "9.9.9"}, "", exitcode.Engine, "dynamo-install: "},
		{"interrupted", cancelled, plan.Dynamo{Cache: cache, Version: "9.9.9"}, "", exitcode.Interrupted, "dynamo-install: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			tmp := tt.tmp
			if tmp == "" {
				tmp = t.TempDir()
			}
			err := dynamoinstall.RunCommand(ctx, dynamoinstall.CommandOptions{
				Interrupted: func() exitcode.Code { return exitcode.Interrupted },
				Options:     dynamoinstall.Options{Dynamo: tt.d, Tmp: tmp, Stdout: io.Discard, Stderr: io.Discard},
			})
			if exitcode.Of(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%v (exit %d), want exit %d with %q", err, exitcode.Of(err), tt.code, tt.want)
			}
		})
	}
}

func TestRunCommandSays(t *testing.T) {
	fakes := dynamoinstalltest.New(t)
	fakes.Setenv(t, t.TempDir())
	cache := filepath.Join(t.TempDir(), "wheels")
	tmp := t.TempDir()
	for _, want := range []string{"dynamo-install: version-1.2.1/cp312-x86_64 fetched into " + filepath.Join(cache, "version-1.2.1", "cp312-x86_64") + " and installed in ",
		"dynamo-install: version-1.2.1/cp312-x86_64 already installed in this container\n"} {
		var out strings.Builder
		err := dynamoinstall.RunCommand(t.Context(), dynamoinstall.CommandOptions{Options: dynamoinstall.Options{
			Dynamo: plan.Dynamo{Cache: cache, Version: "1.2.1"}, Tmp: tmp, Stdout: &out, Stderr: io.Discard}})
		if err != nil || !strings.Contains(out.String(), want) {
			t.Errorf("%v, stdout %q; want %q", err, out.String(), want)
		}
	}
}
